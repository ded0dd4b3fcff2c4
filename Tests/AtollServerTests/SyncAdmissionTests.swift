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

    /// Closing a connection gives back its sessions (and what they claimed) to their users, and
    /// leaves other connections' sessions alone.
    @Test func closingAConnectionReleasesItsSessionsOnly() {
        var limits = ServerConfiguration.Limits()
        limits.sessionsPerUser = 3
        let admission = SyncAdmission(limits: limits)
        #expect(admission.open(connection: 1, address: "a"))
        #expect(admission.open(connection: 2, address: "a"))
        #expect(admission.admitSession(1, user: "u", connection: 1) == nil)
        #expect(admission.admitSession(2, user: "u", connection: 1) == nil)
        #expect(admission.admitSession(1, user: "u", connection: 2) == nil)
        #expect(admission.claimHeldObjects(10, session: 1, connection: 1))
        #expect(admission.admitSession(3, user: "u", connection: 2) == .sessionsPerUser)
        admission.releaseSession(2, connection: 1)
        admission.close(connection: 1, address: "a")
        #expect(admission.admitSession(2, user: "u", connection: 2) == nil)
        #expect(admission.admitSession(3, user: "u", connection: 2) == nil, "connection 1's sessions were given back")
        #expect(admission.admitSession(4, user: "u", connection: 2) == .sessionsPerUser, "connection 2's stay counted")
    }
}
