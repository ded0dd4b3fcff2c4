import AtollCore
import AtollServer
import Foundation
import Testing

/// A device whose copy went back in time (restored from yesterday's backup, commits lost in a
/// power loss) comes back with client versions and a server version the server has seen: the
/// server answers with a client reset, never takes its new commits for duplicates (issue 21 §6).
/// Raw frames: the SDK detects some of these cases itself before the server sees them.
@Suite struct ClientRewindTests {
    static let home = PartitionValue.string("home")

    /// The device uploaded client version 1 and saw it come back; a restored copy (at server
    /// version 0, the same file ident) commits something else as its version 1.
    @Test func aClientVersionReusedWithOtherContentGetsAClientReset() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let device = try await SyncTestClient.connect(to: server)
            _ = try await device.hello()
            let ident = try #require(try await device.bind(1, partition: Self.home, token: token).identAnswer)
            let lost = SyncFixtures.createTask("t1", title: "uploaded, then lost on the device", timestamp: 1_700_000_000_000)
            device.send(.upload(Upload(session: 1, changesets: [UploadChangeset(lost, lastServerVersion: 0)])))
            #expect(try await device.next { $0.uploadAck }.serverVersion == 1)
            _ = try await device.downloads(1, through: 1)
            await device.close()

            let restored = try await SyncTestClient.connect(to: server)
            _ = try await restored.hello()
            _ = try #require(try await restored.bind(1, partition: Self.home, token: token, file: ident.fileIdent, epoch: ident.epoch).identAnswer)
            let new = SyncFixtures.createTask("t2", title: "written after the restore", timestamp: 1_700_000_090_000)
            restored.send(.upload(Upload(session: 1, changesets: [UploadChangeset(new, lastServerVersion: 0)])))
            let answer = try await restored.next { $0.resetRequired != nil || $0.uploadAck != nil ? $0 : nil }
            let reset = try #require(answer.resetRequired, "taken as a duplicate: \(answer)")
            #expect(reset.reason == .historyRestored)
            #expect(reset.message.contains("went back in time"), "\(reset.message)")
            await restored.close()

            // Nothing of the refused upload is in the history; the lost commit stays.
            let reader = try await SyncTestClient.connect(to: server)
            _ = try await reader.hello()
            _ = try #require(try await reader.bind(1, partition: Self.home, token: token).identAnswer)
            let history = try await reader.downloads(1, through: 1)
            #expect(history.map(\.originTimestamp) == [lost.timestamp])
            await reader.close()
        }
    }

    /// The same changeset sent again (a lost acknowledgement) stays a duplicate: acknowledged,
    /// integrated once.
    @Test func aResentChangesetIsStillADuplicate() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let device = try await SyncTestClient.connect(to: server)
            _ = try await device.hello()
            let ident = try #require(try await device.bind(1, partition: Self.home, token: token).identAnswer)
            let created = SyncFixtures.createTask("t1", title: "once")
            device.send(.upload(Upload(session: 1, changesets: [UploadChangeset(created, lastServerVersion: 0)])))
            #expect(try await device.next { $0.uploadAck }.serverVersion == 1)
            await device.close()

            let again = try await SyncTestClient.connect(to: server)
            _ = try await again.hello()
            _ = try #require(try await again.bind(1, partition: Self.home, token: token, file: ident.fileIdent, epoch: ident.epoch).identAnswer)
            again.send(.upload(Upload(session: 1, changesets: [UploadChangeset(created, lastServerVersion: 0)])))
            #expect(try await again.next { $0.uploadAck }.serverVersion == 1)
            await again.close()
        }
    }

    /// The device identified at server version 1; a restored copy identifies at 0 with the same
    /// file: it lost what it had integrated (and perhaps commits it uploaded).
    @Test func anIdentBelowWhatTheFileHadIntegratedGetsAClientReset() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let writer = try await SyncTestClient.connect(to: server)
            _ = try await writer.hello()
            _ = try #require(try await writer.bind(1, partition: Self.home, token: token).identAnswer)
            writer.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t1", title: "a"), lastServerVersion: 0)])))
            #expect(try await writer.next { $0.uploadAck }.serverVersion == 1)

            let device = try await SyncTestClient.connect(to: server)
            _ = try await device.hello()
            let ident = try #require(try await device.bind(1, partition: Self.home, token: token).identAnswer)
            _ = try await device.downloads(1, through: 1)
            await device.close()
            let later = try await SyncTestClient.connect(to: server)
            _ = try await later.hello()
            _ = try #require(try await later.bind(1, partition: Self.home, token: token, file: ident.fileIdent, serverVersion: 1,
                                                  epoch: ident.epoch).identAnswer)
            await later.close()

            let restored = try await SyncTestClient.connect(to: server)
            _ = try await restored.hello()
            let answer = try await restored.bind(1, partition: Self.home, token: token, file: ident.fileIdent, serverVersion: 0, epoch: ident.epoch)
            let reset = try #require(answer.resetRequired, "\(answer)")
            #expect(reset.reason == .historyRestored)
            #expect(reset.message.contains("went back in time"), "\(reset.message)")
            await restored.close()
            await writer.close()
        }
    }
}
