import AtollCore
import AtollServer
import Foundation
import Testing

@Suite("Sync endpoint: bad frames, restarts, resets, large messages")
struct SyncResilienceTests {
    @Test func aMalformedFrameIsATypedErrorAndTheServerStaysUp() async throws {
        try await withServer { server in
            let broken = try await SyncTestClient.connect(to: server)
            _ = try await broken.hello()
            broken.sendRaw([0xFF, 0xFF, 0xFF])  // a header whose varint never ends
            let error = try #require(try await broken.next().errorMessage)
            #expect(error.code == .badFrame)
            #expect(error.action == .protocolViolation)
            #expect(error.session == nil)
            guard case .closed = try await broken.nextIncoming() else { Issue.record("the connection stayed open"); return }

            // A fresh connection still works, and so does HTTP.
            let token = try await SyncFixtures.accessToken(server)
            let fresh = try await SyncTestClient.connect(to: server)
            #expect(try await fresh.hello().serverHello != nil)
            #expect(try await fresh.bind(1, partition: .string("home"), token: token).identAnswer != nil)
            #expect(try await server.http.send("GET", "/health").status == 200)
            await fresh.close()
        }
    }

    @Test func aWellFramedButMalformedMessageNamesWhatIsWrong() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            // Bound first: before that an upload is refused undecoded (SyncLimitsTests).
            let token = try await SyncFixtures.accessToken(server)
            #expect(try await client.bind(1, partition: .string("home"), token: token).identAnswer != nil)
            client.sendMessageBytes([0x04, 0x01, 0x05])  // an upload announcing 5 changesets and holding none
            let error = try #require(try await client.next().errorMessage)
            #expect(error.code == .malformedMessage)
            #expect(error.message.contains("upload"))
            guard case .closed = try await client.nextIncoming() else { Issue.record("the connection stayed open"); return }
        }
    }

    @Test func aTextFrameIsABadFrame() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            client.sendText("hello?")
            #expect(try await client.next().errorMessage?.code == .badFrame)
            guard case .closed = try await client.nextIncoming() else { Issue.record("the connection stayed open"); return }
        }
    }

    @Test func messagesLargerThanAFrameAreChunkedBothWays() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            // The uploader sends 4 KiB frames; the receiver accepts only 16 KiB frames (the protocol default).
            let a = try await SyncTestClient.connect(to: server, frameBytes: 4096)
            let b = try await SyncTestClient.connect(to: server, maxFrameSize: 16 * 1024)
            _ = try await a.hello()
            _ = try await b.hello()
            _ = try #require(try await a.bind(1, partition: .string("big"), token: token).identAnswer)
            _ = try #require(try await b.bind(1, partition: .string("big"), token: token).identAnswer)
            let title = String(repeating: "long title ", count: 20_000)  // ~220 KB
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t1", title: title), lastServerVersion: 0)])))
            #expect(try await a.next { $0.uploadAck }.serverVersion == 1)
            let received = try await b.downloads(1, through: 1)
            #expect(received.first?.changeset.instructions.last == .set(SyncFixtures.task("t1"), path: [.property("title")], value: .string(title)))
            await a.close()
            await b.close()
        }
    }

    @Test func aRestartKeepsHistoryEpochsAndFileIdents() async throws {
        let configuration = TestServer.configuration()
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let first = try await TestServer.start(configuration)
        let token = try await SyncFixtures.accessToken(first)
        let client = try await SyncTestClient.connect(to: first)
        _ = try await client.hello()
        let ident = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
        let changesets = [
            SyncFixtures.createTask("t1", title: "one", version: 1),
            SyncFixtures.changeset(2, [.set(SyncFixtures.task("t1"), path: [.property("title")], value: .string("two"))]),
        ]
        client.send(.upload(Upload(session: 1, changesets: changesets.map { UploadChangeset($0, lastServerVersion: 0) })))
        #expect(try await client.next { $0.uploadAck }.serverVersion == 2)
        await client.close()

        let second = try await first.restarted()
        do {
            let again = try await SyncTestClient.connect(to: second)
            _ = try await again.hello()
            let reIdent = try #require(try await again.bind(
                1, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 0, epoch: ident.epoch).identAnswer)
            #expect(reIdent.epoch == ident.epoch)
            #expect(reIdent.fileIdent == ident.fileIdent)
            #expect(reIdent.latestServerVersion == 2)
            let history = try await again.downloads(1, through: 2)
            #expect(history.map(\.changeset.instructions) == changesets.map(\.instructions))
            #expect(history.allSatisfy { $0.originFileIdent == ident.fileIdent.ident })
            // The next new device gets a new ident, not a reused one.
            let other = try #require(try await again.bind(2, partition: .string("home"), token: token).identAnswer)
            #expect(other.fileIdent.ident > ident.fileIdent.ident)
            await again.close()
        } catch {
            try? await second.running.shutdown()
            throw error
        }
        try await second.running.shutdown()
    }

    @Test func anotherEpochRequiresAClientReset() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            let wrongEpoch = SyncEpoch(rawValue: ident.epoch.rawValue &+ 1)
            let reset = try #require(try await client.bind(
                2, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 0, epoch: wrongEpoch).resetRequired)
            #expect(reset.session == 2)
            #expect(reset.reason == .epochChanged)
            #expect(reset.epoch == ident.epoch)
            #expect(reset.recoveryAllowed)
            // The session ended: its later messages are dropped; the id can be bound again.
            client.send(.mark(Mark(session: 2, requestID: 1)))
            #expect(await client.staysQuiet())
            #expect(try await client.bind(
                2, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 0, epoch: ident.epoch).identAnswer != nil)
            await client.close()
        }
    }

    @Test func aServerVersionBeyondTheHistoryOrAnUnknownFileRequiresAReset() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            let ahead = try #require(try await client.bind(
                2, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 9, epoch: ident.epoch).resetRequired)
            #expect(ahead.reason == .historyRestored)
            let forged = FileIdent(ident: ident.fileIdent.ident, salt: ident.fileIdent.salt &+ 1)
            let unknown = try #require(try await client.bind(
                3, partition: .string("home"), token: token, file: forged, serverVersion: 0, epoch: ident.epoch).resetRequired)
            #expect(unknown.reason == .unknownFileIdent)
            await client.close()
        }
    }

    @Test func metricsCountSessionsUploadsAndDownloads() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let a = try await SyncTestClient.connect(to: server)
            let b = try await SyncTestClient.connect(to: server)
            _ = try await a.hello()
            _ = try await b.hello()
            _ = try #require(try await a.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await b.bind(1, partition: .string("home"), token: token).identAnswer)
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t1", title: "x"), lastServerVersion: 0)])))
            _ = try await a.next { $0.uploadAck }
            _ = try await b.downloads(1, through: 1)
            _ = try await a.downloads(1, through: 1)
            let text = try await server.http.send("GET", "/metrics").text
            #expect(text.contains("atoll_sync_sessions_active 2"))
            #expect(text.contains("atoll_sync_uploads_total 1"))
            #expect(text.contains("atoll_sync_downloads_total 2"))
            #expect(text.contains("atoll_sync_integration_duration_seconds_count 1"))
            await a.close()
            await b.close()
            // Closed connections give their sessions back (bounded wait).
            var closed = false
            for _ in 0..<100 where !closed {
                closed = try await server.http.send("GET", "/metrics").text.contains("atoll_sync_sessions_active 0")
                if !closed { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(closed)
        }
    }
}
