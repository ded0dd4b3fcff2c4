import AtollCore
@testable import AtollServer
import Foundation
import GRDB
import Testing

/// The store's side of the operations that make clients reset: settings that persist, archives
/// and restores, last-seen records and compaction.
@Suite struct ServerStoreOperationsTests {
    /// An acknowledged upload survives a power loss by default: every connection of the pool
    /// syncs fully; `normal` is the documented trade-off.
    @Test(arguments: [(ServerConfiguration.Durability.full, 2), (.normal, 1)])
    func durabilitySetsSQLitesSynchronous(durability: ServerConfiguration.Durability, expected: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-durability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteServerStore(path: folder.appendingPathComponent("atoll.sqlite").path, durability: durability)
        #expect(try await store.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == expected)
        #expect(try await store.pool.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == expected)
        #expect(ServerConfiguration().durability == .full)
        try store.close()
    }

    /// A fresh store with app `tasks` and realm `s:home`, removed after `body`.
    private func withStore(_ body: (SQLiteServerStore, StoredRealm, URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-store-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteServerStore(path: folder.appendingPathComponent("atoll.sqlite").path)
        try await store.createApp(StoredApp(id: "tasks", createdAt: Date()))
        let realm = try await store.realm(appID: "tasks", path: "s:home", creatingWith: SyncEpoch(rawValue: 7), now: Date())
        try await body(store, realm, folder)
        try store.close()
    }

    /// Integrates one task per title from `file`, client versions going on from `after`.
    @discardableResult
    private func upload(_ store: SQLiteServerStore, _ realm: StoredRealm, file: Int64, _ titles: [String], after: Int64 = 0) async throws -> Int64 {
        var latest: Int64 = 0
        for (offset, title) in titles.enumerated() {
            let base = try await store.latestServerVersion(realmID: realm.id)
            let changeset = SyncFixtures.createTask(title, title: title, version: after + Int64(offset) + 1)
            latest = try await store.integrate(realmID: realm.id, fileIdent: file, baseServerVersion: base) { _ in [changeset] }.latestServerVersion
        }
        return latest
    }

    @Test func operatorSettingsPersistAcrossReopening() async throws {
        try await withStore { store, _, folder in
            #expect(try await store.setClientRecovery(appID: "tasks", false))
            #expect(try await store.setMaxOfflineTime(appID: "tasks", 3600))
            #expect(try await store.setClientRecovery(appID: "nope", true) == false)
            let reopened = try SQLiteServerStore(path: folder.appendingPathComponent("atoll.sqlite").path)
            let app = try #require(try await reopened.app(id: "tasks"))
            #expect(app.clientRecovery == false)
            #expect(app.maxOfflineTime == 3600)
            try reopened.close()
        }
    }

    @Test func aRestoreRollsTheHistoryBackUnderANewEpochAndNeverReusesAFileIdent() async throws {
        try await withStore { store, realm, _ in
            let file = try await store.newClientFile(realmID: realm.id, salt: 1, now: Date())
            try await upload(store, realm, file: file.ident.ident, ["a", "b"])
            let archive = try await store.archive(realmID: realm.id)
            #expect(archive.history.count == 2)
            #expect(archive.clientFiles.map(\.ident) == [file.ident.ident])
            _ = try await store.newClientFile(realmID: realm.id, salt: 2, now: Date())
            try await upload(store, realm, file: file.ident.ident, ["c"], after: 2)

            let restored = try await store.restore(appID: "tasks", archive, epoch: SyncEpoch(rawValue: 99), reason: .historyRestored, now: Date())
            #expect(restored.epoch == SyncEpoch(rawValue: 99))
            #expect(restored.epochReason == .historyRestored)
            #expect(try await store.latestServerVersion(realmID: realm.id) == 2)
            #expect(try archive.state().objects["Task"]?.count == 2)
            #expect(try await store.clientFile(realmID: realm.id, ident: 2) == nil)
            // Ident 2 was handed out after the backup: the next one is 3.
            #expect(try await store.newClientFile(realmID: realm.id, salt: 3, now: Date()).ident.ident == 3)
        }
    }

    @Test func compactionFoldsWhatNoLiveClientNeedsAndKeepsEachFilesClientVersion() async throws {
        try await withStore { store, realm, _ in
            let gone = try await store.newClientFile(realmID: realm.id, salt: 1, now: Date(timeIntervalSince1970: 1000))
            try await upload(store, realm, file: gone.ident.ident, ["a", "b", "c"])
            let live = try await store.newClientFile(realmID: realm.id, salt: 2, now: Date())
            try await store.touchClientFiles(realmID: realm.id, idents: [live.ident.ident], serverVersion: 2, now: Date())
            try await store.touchClientFiles(realmID: realm.id, idents: [gone.ident.ident], serverVersion: 3, now: Date(timeIntervalSince1970: 1000))
            try await upload(store, realm, file: live.ident.ident, ["d"])

            let snapshot: @Sendable ([HistoryEntry]) throws -> Changeset = { prefix in
                var state = ReplicaState()
                for entry in prefix { state.apply(entry.changeset) }
                return SyncCoordinator.snapshot(of: state, timestamp: prefix.last?.changeset.timestamp ?? 0)
            }
            // The live file has integrated version 2: history up to 2 goes, 3 and 4 stay.
            let result = try await store.compact(realmID: realm.id, liveSince: Date().addingTimeInterval(-60), snapshot)
            #expect(result.compactedThrough == 2)
            #expect(result.removedEntries == 2)
            let history = try await store.history(realmID: realm.id, after: 0, maxBytes: 1 << 20)
            #expect(history.map(\.serverVersion) == [2, 3, 4])
            #expect(history.first?.changeset.fileIdent == 0)
            #expect(try await store.realms(appID: "tasks").first?.compactedThrough == 2)
            // What the gone file had integrated is still known, folded or not.
            #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone.ident.ident, atOrBefore: 2) == 2)
            #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone.ident.ident, atOrBefore: 4) == 3)

            // Replaying the compacted history gives the same data as the full one.
            var state = ReplicaState()
            for entry in history { state.apply(entry.changeset) }
            #expect(state.objects["Task"]?.count == 4)

            // Nothing live any more: everything but the newest entry folds into one snapshot.
            let all = try await store.compact(realmID: realm.id, liveSince: Date().addingTimeInterval(3600), snapshot)
            #expect(all.compactedThrough == 4)
            #expect(try await store.history(realmID: realm.id, after: 0, maxBytes: 1 << 20).map(\.serverVersion) == [4])
            #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: live.ident.ident, atOrBefore: 4) == 1)
        }
    }

    @Test func seeingAClientFileRecordsTheTimeAndTheNewestIntegratedVersion() async throws {
        try await withStore { store, realm, _ in
            let file = try await store.newClientFile(realmID: realm.id, salt: 1, now: Date(timeIntervalSince1970: 1000))
            #expect(try await store.clientFile(realmID: realm.id, ident: file.ident.ident)?.lastSeen == Date(timeIntervalSince1970: 1000))
            try await store.touchClientFiles(realmID: realm.id, idents: [file.ident.ident], serverVersion: 5, now: Date(timeIntervalSince1970: 2000))
            try await store.touchClientFiles(realmID: realm.id, idents: [file.ident.ident], serverVersion: nil, now: Date(timeIntervalSince1970: 3000))
            let seen = try #require(try await store.clientFile(realmID: realm.id, ident: file.ident.ident))
            #expect(seen.lastSeen == Date(timeIntervalSince1970: 3000))
            #expect(seen.lastServerVersion == 5)
        }
    }
}
