@testable import AtollServer
import Testing

/// The shared counts behind the per-user and per-address limits, without a socket.
@Suite struct SyncAdmissionTests {
    @Test func bytesInFlightCountPerUserAndPerAddress() {
        var limits = ServerConfiguration.Limits()
        limits.messageBytesInFlightPerUser = 6
        limits.messageBytesInFlightPerAddress = 7
        let admission = SyncAdmission(limits: limits)
        #expect(admission.open(connection: 1, address: "10.0.0.1"))
        #expect(admission.open(connection: 2, address: "10.0.0.1"))
        #expect(admission.open(connection: 3, address: "10.0.0.2"))
        #expect(admission.holdInFlight(4, user: "a", connection: 1) == nil)
        #expect(admission.holdInFlight(2, user: "b", connection: 2) == nil)
        #expect(admission.holdInFlight(4, user: "b", connection: 2) == "messageBytesInFlightPerAddress", "4 + 4 > 7")
        #expect(admission.holdInFlight(3, user: "b", connection: 2) == nil, "4 + 3")
        #expect(admission.holdInFlight(5, user: "c", connection: 3) == nil, "another address")
        #expect(admission.holdInFlight(7, user: "a", connection: 1) == "messageBytesInFlightPerUser")
        // What a closed connection held is given back to its user and its address.
        admission.close(connection: 1, address: "10.0.0.1")
        #expect(admission.bytesInFlight(of: "a") == 0)
        #expect(admission.holdInFlight(4, user: "b", connection: 2) == nil, "the address has room again")
        #expect(admission.holdInFlight(0, user: "b", connection: 2) == nil)
        #expect(admission.bytesInFlight(of: "b") == 0)
    }
}
