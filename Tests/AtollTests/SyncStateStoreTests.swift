@_spi(Testing) @_spi(Sync) @testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// What the sync engine keeps in the file: the local changesets it reads after a version, and
/// the sync state (versions and rebased pending changesets) it saves with each download.
@Suite struct SyncStateStoreTests {
    static let types = IntegrateInstructionTests.types
    static func n(_ realm: Realm, _ id: Int) -> FzNode? { IntegrateInstructionTests.n(realm, id) }

    /// Three local commits: the node, then its name twice.
    private func threeCommits(_ folder: TemporaryFolder) throws -> Realm {
        var configuration = folder.configuration(objectTypes: Self.types)
        configuration.recordsHistoryForTesting = true  // as a synced realm's
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(FzNode()) }
        try realm.write { Self.n(realm, 0)?.name = "a" }
        try realm.write { Self.n(realm, 0)?.name = "b" }
        return realm
    }

    @Test func localChangesetsAfterAVersionAreTheLaterCommits() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try threeCommits(folder)
        let all = try realm.localChangesets(after: 0)
        #expect(all.count == 3)
        let pending = try realm.localChangesets(after: all[0].version)
        #expect(pending.map(\.version) == Array(all.dropFirst()).map(\.version))
    }

    @Test func rebasedPendingChangesetsAreSavedWithTheIntegratedDownload() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try threeCommits(folder)
        let all = try realm.localChangesets(after: 0)
        #expect(try realm.loadSyncState() == SyncState(), "a realm that never synced has a fresh state")
        var rebased = all[2]
        rebased.instructions = [.set(IntegrateInstructionTests.node(0), path: [.property("name")], value: .string("B"))]
        var state = SyncState(serverVersion: 4, acknowledgedClientVersion: all[0].version,
                              queuedClientVersion: all[2].version, pending: [rebased])
        try realm.write {
            try realm.integrateRemoteInWrite([])
            try realm.saveSyncState(state)
        }
        #expect(try realm.loadSyncState() == state, "a pending changeset left out of the rebase is gone")
        state.serverVersion = 7
        state.pending = []
        try realm.write { try realm.saveSyncState(state, includingPending: false) }
        #expect(try realm.loadSyncState().serverVersion == 7)
        #expect(try realm.loadSyncState().pending == [rebased], "without includingPending the stored pending changesets stay")
    }

    static let internalTables = ["_atoll_history", "_atoll_links", "_atoll_meta", "_atoll_pending_reset", "_atoll_subscription_sets",
                                 "_atoll_subscriptions", "_atoll_sync_state", "_atoll_unresolved"]

    private func internalTables(_ path: String) throws -> [String?] {
        try RawSQLite.fetch("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_atoll\\_%' ESCAPE '\\' ORDER BY name", path: path)
            .map { $0[0] }
    }

    @Test func theInstallerCreatesEveryInternalTableWithTheFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: Self.types)
        _ = try Realm(configuration: configuration)
        #expect(try internalTables(try #require(configuration.fileURL).path) == Self.internalTables)
    }

    @Test func aFileOfFormatTwoGetsTheSyncTablesAndLosesTheUnusedOneWhenOpened() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: Self.types)
        let path = try #require(configuration.fileURL).path
        do { _ = try Realm(configuration: configuration) }
        // What a format 2 file held: no sync tables until first use, and `_atoll_sync`.
        try RawSQLite.execute("""
            DROP TABLE _atoll_sync_state; DROP TABLE _atoll_pending_reset;
            DROP TABLE _atoll_subscription_sets; DROP TABLE _atoll_subscriptions;
            CREATE TABLE _atoll_sync (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
            UPDATE _atoll_meta SET value = 2 WHERE key = 'format';
            """, path: path)
        let realm = try Realm(configuration: configuration)
        #expect(try internalTables(path) == Self.internalTables)
        #expect(try RawSQLite.fetch("SELECT value FROM _atoll_meta WHERE key = 'format'", path: path) == [["4"]])
        try realm.write { try realm.saveSyncState(SyncState(serverVersion: 2)) }
        #expect(try realm.loadSyncState().serverVersion == 2)
    }

    /// Format 4 records the local version each subscription set was committed at; a format 3 file
    /// gets the column when opened, its sets ordered after no write in particular (0).
    @Test func aFileOfFormatThreeGetsTheClientVersionOfItsSubscriptionSets() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: Self.types)
        let path = try #require(configuration.fileURL).path
        do { _ = try Realm(configuration: configuration) }
        try RawSQLite.execute("""
            DROP TABLE _atoll_subscription_sets;
            CREATE TABLE _atoll_subscription_sets (version INTEGER PRIMARY KEY, state TEXT NOT NULL, error TEXT, created_at REAL NOT NULL);
            INSERT INTO _atoll_subscription_sets VALUES (1, 'pending', NULL, 0);
            UPDATE _atoll_meta SET value = 3 WHERE key = 'format';
            """, path: path)
        let realm = try Realm(configuration: configuration)
        #expect(try RawSQLite.fetch("SELECT value FROM _atoll_meta WHERE key = 'format'", path: path) == [["4"]])
        #expect(try RawSQLite.fetch("SELECT version, client_version FROM _atoll_subscription_sets", path: path) == [["1", "0"]])
        #expect(try realm.latestSubscriptionSet()?.clientVersion == 0)
    }
}
