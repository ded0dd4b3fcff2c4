import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// History retention by the server's clock (an app's maximum offline time): a test moves the
/// clock instead of waiting, and last-seen times, idents and compaction all read it.
@Suite struct SyncRetentionTests {
    /// A client of realm "home" with file `file` at server version `version`.
    struct Device {
        var file: FileIdent
        var epoch: SyncEpoch
        var version: Int64
    }

    /// Binds and idents `device` on a new connection with a fresh access token of `login` (the clock
    /// moves past older ones); returns the answer and closes the connection, waiting until the
    /// server let the session go (its last-seen time is written then).
    static func visit(_ server: TestServer, _ login: HTTP.Login, as device: Device?) async throws -> ServerMessage {
        let token = try #require(try await server.http.refresh(login.refresh_token).object["access_token"] as? String)
        let client = try await SyncTestClient.connect(to: server)
        _ = try await client.hello()
        let answer = try await client.bind(
            1, partition: .string("home"), token: token, file: device?.file ?? .unassigned,
            serverVersion: device?.version ?? 0, epoch: device?.epoch ?? .none)
        await client.close()
        #expect(try await noSessionsLeft(server))
        return answer
    }

    /// A bounded poll: the coordinator lists a session until its client file was recorded as seen.
    static func noSessionsLeft(_ server: TestServer) async throws -> Bool {
        for _ in 0..<1_000 {
            if await server.running.coordinator.sessions(appID: "tasks").isEmpty { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// A device that uploaded three changesets to "home", then left.
    static func deviceWithHistory(_ server: TestServer, _ login: HTTP.Login) async throws -> Device {
        let token = login.access_token
        let client = try await SyncTestClient.connect(to: server)
        _ = try await client.hello()
        let ident = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
        let changesets = [SyncFixtures.createTask("t1", title: "a", version: 1), SyncFixtures.createTask("t2", title: "b", version: 2),
                          SyncFixtures.createTask("t3", title: "c", version: 3)]
        client.send(.upload(Upload(session: 1, changesets: changesets.map { UploadChangeset($0, lastServerVersion: 0) })))
        let ack = try await client.next { $0.uploadAck }
        _ = try await client.downloads(1, through: ack.serverVersion)
        await client.close()
        #expect(try await noSessionsLeft(server))
        return Device(file: ident.fileIdent, epoch: ident.epoch, version: ack.serverVersion)
    }

    @Test func aClientAwayLongerThanTheMaxOfflineTimeMustResetAndEachVisitCounts() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let login = try await server.http.anonymousLogin()
            let device = try await Self.deviceWithHistory(server, login)
            // The clock also moves with real time: the margins leave a slow machine minutes.
            try await server.running.coordinator.setMaxOfflineTime(appID: "tasks", 600)
            clock.advance(by: 400)
            #expect(try await Self.visit(server, login, as: device).identAnswer != nil)
            // The visit was recorded at the server's time: another 400 s is within the limit again.
            clock.advance(by: 400)
            #expect(try await Self.visit(server, login, as: device).identAnswer != nil)
            clock.advance(by: 601)
            let reset = try #require(try await Self.visit(server, login, as: device).resetRequired)
            #expect(reset.reason == .historyCompacted)
            #expect(reset.message.contains("longer than the app's maximum offline time"), "\(reset.message)")
        }
    }

    /// An upload records what the client had integrated (its base) at most every 10 s: each
    /// record is a committed write, and one made late only makes compaction keep more.
    @Test func uploadsRecordWhatTheClientIntegratedAtMostEveryTenSeconds() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let coordinator = server.running.coordinator
            let login = try await server.http.anonymousLogin()
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("home"), token: login.access_token).identAnswer)
            let realm = try await coordinator.realm(appID: "tasks", path: "s:home")
            func recorded() async throws -> Int64? {
                try await coordinator.store.clientFile(realmID: realm.id, ident: ident.fileIdent.ident)?.lastServerVersion
            }
            var base: Int64 = 0
            func upload(_ version: Int64) async throws {
                let changeset = version == 1 ? SyncFixtures.createTask("t", title: "a")
                    : SyncFixtures.changeset(version, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string("v\(version)"))])
                client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(changeset, lastServerVersion: base)])))
                base = try await client.next { $0.uploadAck }.serverVersion
                _ = try await client.pingRoundTrip { _ in true }  // the upload's handling, its record included, is over
            }
            try await upload(1)
            try await upload(2)
            try await upload(3)
            #expect(try await recorded() == 0, "uploads 2 and 3 came within 10 s of the first")
            clock.advance(by: 11)
            try await upload(4)
            #expect(try await recorded() == 3)
            await client.close()
        }
    }

    @Test func compactionFoldsTheHistoryNoClientSeenWithinTheMaxOfflineTimeNeeds() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let coordinator = server.running.coordinator
            let login = try await server.http.anonymousLogin()
            let device = try await Self.deviceWithHistory(server, login)
            try await coordinator.setMaxOfflineTime(appID: "tasks", 600)
            #expect(try await coordinator.compact(appID: "tasks").map(\.result.removedEntries) == [0], "seen within 10 minutes")
            clock.advance(by: 601)
            // Moving the clock past 600 s also wakes the server's own compaction (CompactionService,
            // every 600 s), which may fold the history first: either way it is folded.
            let compacted = try #require(try await coordinator.compact(appID: "tasks").first?.result)
            #expect(compacted.compactedThrough >= 2)
            // A new client starts from the snapshot; the one away too long resets.
            let fresh = try #require(try await Self.visit(server, login, as: nil).identAnswer)
            #expect(fresh.latestServerVersion == device.version)
            #expect(try await Self.visit(server, login, as: device).resetRequired?.reason == .historyCompacted)
        }
    }
}
