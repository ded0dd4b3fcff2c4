import AtollCore
import Foundation
import Testing

@Suite struct ProtocolMessageCodingTests {
    @Test(arguments: ProtocolFixtures.clientMessages)
    func clientMessageRoundTrips(_ message: ClientMessage) throws {
        #expect(try ClientMessage(decoding: message.encoded()) == message)
    }

    @Test(arguments: ProtocolFixtures.serverMessages)
    func serverMessageRoundTrips(_ message: ServerMessage) throws {
        #expect(try ServerMessage(decoding: message.encoded()) == message)
    }

    @Test func everyMessageKindIsCovered() {
        let clientTags = Set(ProtocolFixtures.clientMessages.map { $0.encoded()[0] })
        let serverTags = Set(ProtocolFixtures.serverMessages.map { $0.encoded()[0] })
        #expect(clientTags.count == 9)
        #expect(serverTags.count == 10)
        #expect(clientTags.allSatisfy { $0 < 0x80 } && serverTags.allSatisfy { $0 >= 0x80 })
    }

    @Test(arguments: ProtocolFixtures.clientMessages)
    func truncatedClientMessageIsMalformedAtEveryCut(_ message: ClientMessage) {
        let bytes = message.encoded()
        for cut in 0..<bytes.count {
            #expect(throws: ProtocolError.self, "cut at \(cut) of \(bytes.count)") { try ClientMessage(decoding: bytes.prefix(cut)) }
            do { _ = try ClientMessage(decoding: bytes.prefix(cut)) } catch {
                #expect(error.code == .malformedMessage)
                #expect(cut == 0 ? error.message == "empty client message" : error.message.contains("byte"), "\(error.message)")
            }
        }
    }

    @Test(arguments: ProtocolFixtures.serverMessages)
    func truncatedServerMessageIsMalformedAtEveryCut(_ message: ServerMessage) {
        let bytes = message.encoded()
        for cut in 0..<bytes.count {
            do {
                _ = try ServerMessage(decoding: bytes.prefix(cut))
                Issue.record("cut at \(cut) of \(bytes.count) decoded")
            } catch {
                #expect(error.code == .malformedMessage)
            }
        }
    }

    @Test(arguments: ProtocolFixtures.serverMessages)
    func trailingBytesAreRefused(_ message: ServerMessage) {
        #expect(throws: ProtocolError(.malformedMessage, "\(tagName(message)) message: 1 trailing bytes at byte \(message.encoded().count)")) {
            try ServerMessage(decoding: message.encoded() + [0])
        }
    }

    private func tagName(_ message: ServerMessage) -> String {
        switch message {
        case .hello: "serverHello"
        case .identAnswer: "identAnswer"
        case .resetRequired: "resetRequired"
        case .uploadAck: "uploadAck"
        case .download: "download"
        case .markAnswer: "markAnswer"
        case .queryError: "queryError"
        case .unbound: "unbound"
        case .pong: "pong"
        case .error: "error"
        }
    }

    @Test func messageSentTheWrongWayIsUnknown() throws {
        let server = ServerMessage.pong(Pong(timestamp: 1)).encoded()
        #expect(throws: ProtocolError.self) { try ClientMessage(decoding: server) }
        do { _ = try ClientMessage(decoding: server) } catch { #expect(error.code == .unknownMessage) }
        do { _ = try ServerMessage(decoding: [0x7F]) } catch { #expect(error.code == .unknownMessage) }
    }

    @Test func badFieldsSayWhatAndWhere() {
        // A bind with an unknown partition tag.
        var w = BinaryWriter()
        w.byte(0x02); w.varint(1); w.byte(1); w.string("x:1"); w.string("t")
        #expect(throws: ProtocolError(.malformedMessage, "bind message: bad realm path 'x:1' at byte 3")) { try ClientMessage(decoding: w.bytes) }
        // A hello with an empty range.
        var h = BinaryWriter()
        h.byte(0x01); h.varint(3); h.varint(1); h.string("ua")
        #expect(throws: ProtocolError(.malformedMessage, "hello message: empty version range 3...1")) { try ClientMessage(decoding: h.bytes) }
        // An error with an unknown code.
        var e = BinaryWriter()
        e.byte(0x8A); e.varint(999)
        #expect(throws: ProtocolError(.malformedMessage, "error message: unknown error code 999 at byte 1")) { try ServerMessage(decoding: e.bytes) }
        // A corrupt embedded changeset names the changeset's position.
        var u = BinaryWriter()
        u.byte(0x04); u.varint(1); u.varint(1); u.int(0); u.blob([9, 9, 9])
        #expect(throws: ProtocolError(.malformedMessage, "upload message: changeset at byte 4: unknown changeset format 9")) {
            try ClientMessage(decoding: u.bytes)
        }
    }

    @Test func garbageNeverTraps() {
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        var decoded = 0
        for _ in 0..<20_000 {
            let count = Int(next() % 48)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
            if !bytes.isEmpty { bytes[0] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x81, 0x85, 0x8A][Int(next() % 12)] }
            if (try? ClientMessage(decoding: bytes)) != nil { decoded += 1 }
            if (try? ServerMessage(decoding: bytes)) != nil { decoded += 1 }
        }
        #expect(decoded < 20_000)
    }

    @Test func flippedBytesNeverTrap() {
        for message in ProtocolFixtures.serverMessages {
            let bytes = message.encoded()
            for i in bytes.indices {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var copy = bytes
                    copy[i] ^= flip
                    _ = try? ServerMessage(decoding: copy)
                }
            }
        }
    }

    @Test(arguments: [PartitionValue.string(""), .string("a:b"), .int(Int64.min), .objectId(ObjectId(bytes: Array(repeating: 0xAB, count: 12))),
                      .uuid(UUID()), .null])
    func partitionPathsRoundTrip(_ value: PartitionValue) {
        #expect(PartitionValue(path: value.path) == value)
    }

    @Test(arguments: ["", "s", "x:1", "i:1.5", "i:", "o:zz", "u:not-a-uuid", "n:x", "u:e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
                      "i:+5", "i:007", "o:ABABABABABABABABABABABAB"])
    func badPartitionPathsAreRefused(_ path: String) {
        #expect(PartitionValue(path: path) == nil)
    }
}
