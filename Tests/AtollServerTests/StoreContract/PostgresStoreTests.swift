import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Logging
import Testing

/// Skipped, and said so in the test report, where PostgreSQL is not installed (`.ci/run` installs
/// it, so CI always runs these).
let postgresInstalled = ConditionTrait.enabled(
    if: PostgresCluster.isAvailable, "PostgreSQL is not installed (apt-get install postgresql): the PostgreSQL store tests are skipped")

/// A PostgreSQL store on a new database of the process's test cluster.
func withPostgresStore(url: String? = nil, _ body: (PostgresServerStore) async throws -> Void) async throws {
    let url = if let url { url } else { try await PostgresCluster.shared().createDatabase() }
    let store = try await PostgresServerStore.open(url: url, maximumConnections: 8, logger: quietLogger)
    do {
        try await body(store)
    } catch {
        await store.shutdown()
        throw error
    }
    await store.shutdown()
}

let quietLogger = Logger(label: "atoll.test.store") { _ in SwiftLogNoOpLogHandler() }

/// Every behaviour of the store contract, on PostgreSQL (the SQLite store runs the same cases in
/// `SQLiteStoreContractTests`).
@Suite(postgresInstalled) struct PostgresStoreContractTests {
    @Test(arguments: StoreContract.allCases) func contract(_ behaviour: StoreContract) async throws {
        try await withPostgresStore { store in try await behaviour.run(on: store) }
    }
}

/// What only the PostgreSQL store has: its URL, its migrations, and several stores (nodes) on one
/// database.
@Suite(postgresInstalled) struct PostgresStoreTests {
    /// The token secret the nodes of these tests share: their announcements are sealed under it.
    static let nodesTokenSecret = "token-secret-of-these-nodes-0123456789"

    /// Two stores on one database integrate into one realm at once: one history with consecutive
    /// versions, every upload exactly once, as one store would make it.
    @Test func twoNodesIntegratingIntoOneRealmMakeOneHistory() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let nodes = [
            try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger),
            try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger),
        ]
        defer { for node in nodes { Task { await node.shutdown() } } }
        try await nodes[0].createApp(StoredApp(id: "app", createdAt: Date()))
        let realm = try await nodes[1].realm(appID: "app", path: "s:shared", creatingWith: 7, now: Date())
        #expect(try await nodes[0].realm(appID: "app", path: "s:shared", creatingWith: 8, now: Date()).id == realm.id)

        let clients = 8, uploads = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in 0..<clients {
                let node = nodes[c % nodes.count]
                group.addTask {
                    let file = try await node.newClientFile(realmID: realm.id, salt: Int64(c), now: Date())
                    for u in 1...uploads {
                        _ = try await node.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: 0) { input in
                            [Changeset(version: Int64(u), timestamp: Int64(u), instructions: [])]
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let history = try await nodes[0].history(realmID: realm.id, after: 0, maxBytes: .max)
        #expect(history.map(\.serverVersion) == Array(1...Int64(clients * uploads)))
        #expect(try await nodes[1].latestServerVersion(realmID: realm.id) == Int64(clients * uploads))
        let perFile = Dictionary(grouping: history, by: \.changeset.fileIdent).mapValues { $0.map(\.changeset.version) }
        #expect(perFile.count == clients)
        #expect(perFile.values.allSatisfy { $0 == Array(1...Int64(uploads)) }, "each file's uploads once, in order")
    }

    /// A node integrates against what it last knew of a realm and appends in one statement only if
    /// that still holds. Another node's append, a restart of the history and a compaction each
    /// make that view stale: the statement then writes nothing, and the integration runs again
    /// under the realm's lock against what the database holds.
    @Test func aNodesStaleViewOfARealmNeverWrites() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let one = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        let two = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        try await one.createApp(StoredApp(id: "app", createdAt: Date()))
        let realm = try await one.realm(appID: "app", path: "s:p", creatingWith: 1, now: Date())
        let fileA = try await one.newClientFile(realmID: realm.id, salt: 1, now: Date()).ident.ident
        let fileB = try await two.newClientFile(realmID: realm.id, salt: 2, now: Date()).ident.ident
        let inputs = Locked<[IntegrationInput]>([])
        func upload(_ store: PostgresServerStore, _ file: Int64, version: Int64, base: Int64) async throws -> IntegrationResult {
            inputs.withLock { $0 = [] }
            return try await store.integrate(realmID: realm.id, fileIdent: file, baseServerVersion: base) { input in
                inputs.withLock { $0.append(input) }
                return [Changeset(version: version, timestamp: version, instructions: [])]
            }
        }

        #expect(try await upload(one, fileA, version: 1, base: 0).latestServerVersion == 1)
        #expect(try await upload(one, fileA, version: 2, base: 1).latestServerVersion == 2)
        #expect(inputs.withLock { $0.count } == 1, "a current view: one integration, one statement")

        // Another node appends: node one's view is stale, its append writes nothing, and the
        // integration runs again against the database, with the other node's entry.
        #expect(try await upload(two, fileB, version: 1, base: 2).latestServerVersion == 3)
        let result = try await upload(one, fileA, version: 3, base: 2)
        #expect(result.latestServerVersion == 4)
        let seen = inputs.withLock { $0 }
        #expect(seen.map(\.latestServerVersion) == [2, 3])
        #expect(seen.last?.historyAfterBase.map(\.serverVersion) == [3])
        var history = try await one.history(realmID: realm.id, after: 0, maxBytes: .max)
        #expect(history.map(\.serverVersion) == [1, 2, 3, 4])
        #expect(history.map(\.changeset.fileIdent) == [fileA, fileA, fileB, fileA])

        // A restart of the history on the other node (a new epoch; client files start over):
        // node one's view is stale, and its append of a forgotten file writes nothing.
        try await two.restartHistory(realmID: realm.id, epoch: 99, reason: .epochChanged,
                                     snapshot: Changeset(version: 0, timestamp: 0, instructions: []))
        await #expect(throws: ServerStoreError.self) { try await upload(one, fileA, version: 4, base: 4) }
        #expect(try await one.latestServerVersion(realmID: realm.id) == 0)
        let fileC = try await two.newClientFile(realmID: realm.id, salt: 3, now: Date()).ident.ident
        #expect(try await upload(one, fileC, version: 1, base: 0).latestServerVersion == 1)
        #expect(inputs.withLock { $0.map(\.epoch) } == [99])
        #expect(try await upload(two, fileC, version: 2, base: 1).latestServerVersion == 2)

        // A compaction on the other node: node one's next append goes through the lock, with the
        // new compaction point, and lands after what the database holds.
        _ = try await upload(one, fileC, version: 3, base: 2)
        let compaction = try await two.compact(realmID: realm.id, liveSince: .distantFuture) { _ in
            Changeset(version: 0, timestamp: 0, instructions: [])
        }
        #expect(compaction.compactedThrough == 3)
        #expect(try await upload(one, fileC, version: 4, base: 3).latestServerVersion == 4)
        #expect(inputs.withLock { $0.map(\.compactedThrough) } == [0, 3])
        history = try await one.history(realmID: realm.id, after: 0, maxBytes: .max)
        #expect(history.map(\.serverVersion) == [3, 4])
        await one.shutdown()
        await two.shutdown()
    }

    /// A database migrated by a newer atoll-server is refused with a message that says so, and
    /// nothing is written to it.
    @Test func aDatabaseNewerThanTheBinaryIsRefused() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let store = try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger)
        try await store.createApp(StoredApp(id: "app", createdAt: Date()))
        try await store.recordMigrationForTesting(version: 1_000, name: "from the future")
        await store.shutdown()

        let error = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger)
        }
        #expect(error?.message.contains("1000") == true)
    }

    /// Opening a migrated database again applies nothing and keeps its rows; nodes starting
    /// together migrate once.
    @Test func nodesStartingTogetherMigrateOnce() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let stores = try await withThrowingTaskGroup(of: PostgresServerStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger) } }
            var stores: [PostgresServerStore] = []
            for try await store in group { stores.append(store) }
            return stores
        }
        try await stores[0].createApp(StoredApp(id: "app", createdAt: Date()))
        for store in stores { await store.shutdown() }
        let again = try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger)
        #expect(try await again.apps().map(\.id) == ["app"])
        #expect(try await again.appliedMigrationsForTesting().map(\.0) == PostgresMigrations.all.map(\.version))
        await again.shutdown()
    }

    /// A node hears of the other nodes' integrations and published changes (not of its own), once
    /// their transactions committed.
    @Test func nodesHearOfEachOthersChanges() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let one = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        let two = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        for store in [one, two] { store.authenticateAnnouncements(tokenSecret: Self.nodesTokenSecret) }
        let heard = try #require(two.changesFromOtherNodes())
        var iterator = heard.makeAsyncIterator()
        #expect(await iterator.next() == .missed, "a feed starts by saying it may have missed changes")

        try await one.createApp(StoredApp(id: "app", createdAt: Date()))
        let realm = try await one.realm(appID: "app", path: "s:p", creatingWith: 1, now: Date())
        let file = try await one.newClientFile(realmID: realm.id, salt: 1, now: Date())
        _ = try await two.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: 0) { _ in
            [Changeset(version: 1, timestamp: 1, instructions: [])]
        }  // its own: not heard by two
        _ = try await one.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: 0) { _ in
            [Changeset(version: 2, timestamp: 2, instructions: [])]
        }
        // The appended entry rides along, so the other nodes need not read it back.
        let appended = Changeset(version: 2, timestamp: 2, fileIdent: file.ident.ident, instructions: [])
        #expect(await iterator.next() == .history(realmID: realm.id, latestServerVersion: 2,
                                                  entries: [HistoryEntry(serverVersion: 2, changeset: appended)], epoch: 1))
        for change: StoreChange in [.historyReplaced(realmID: realm.id), .syncTerminated(appID: "app"), .appChanged(appID: "app"),
                                     .runtimeAppChanged(appID: "app"),
                                     .sessionsEnded(userID: "u", deviceID: "d", reason: "disabled\tby an operator"),
                                     .sessionsEnded(userID: "u", deviceID: nil, reason: "")] {
            try await one.publish(change)
            let expected: StoreChange = if case .sessionsEnded(let user, let device, let reason) = change {
                .sessionsEnded(userID: user, deviceID: device, reason: reason.replacingOccurrences(of: "\t", with: " "))
            } else { change }
            #expect(await iterator.next() == expected)
        }
        await one.shutdown()
        await two.shutdown()
    }

    /// Announcements sent after their commits arrive in order and all of them, however many queue
    /// up (several per NOTIFY transaction).
    @Test(.timeLimit(.minutes(1))) func queuedAnnouncementsArriveInOrder() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let one = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        let two = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        for store in [one, two] { store.authenticateAnnouncements(tokenSecret: Self.nodesTokenSecret) }
        let heard = try #require(two.changesFromOtherNodes())
        var iterator = heard.makeAsyncIterator()
        #expect(await iterator.next() == .missed)
        let count = PostgresAnnouncer.maxBatch * 2 + 7
        for i in 0..<count { one.announcer.announce(one.notification(.appChanged(appID: "app-\(i)"))) }
        var received: [StoreChange] = []
        while received.count < count, let next = await iterator.next() { received.append(next) }
        #expect(received == (0..<count).map { .appChanged(appID: "app-\($0)") })
        await one.shutdown()
        await two.shutdown()
    }

    /// The first node's token secret and admin key are every node's.
    @Test func nodesShareTheFirstNodesSecrets() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let one = try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger)
        let two = try await PostgresServerStore.open(url: url, maximumConnections: 2, logger: quietLogger)
        let first = try await one.sharedSecret(named: "token-secret") { "secret-of-node-one-0123456789abcdef" }
        let second = try await two.sharedSecret(named: "token-secret") { "secret-of-node-two-0123456789abcdef" }
        #expect(first == "secret-of-node-one-0123456789abcdef")
        #expect(second == first)
        #expect(try await two.sharedSecret(named: "admin-key") { "key-of-node-two" } == "key-of-node-two")
        // Wrapping in place replaces only the value the node read (another node may have wrapped it).
        #expect(try await one.replaceSharedSecret(named: "admin-key", stored: "not what is stored", with: "wrapped") == false)
        #expect(try await one.replaceSharedSecret(named: "admin-key", stored: "key-of-node-two", with: "wrapped") == true)
        #expect(try await two.sharedSecret(named: "admin-key") { "another" } == "wrapped")
        await one.shutdown()
        await two.shutdown()
    }

    @Test func storeURLsAreReadAsLibpqReadsThem() throws {
        let full = try PostgresURL("postgres://ann:s%40cret@db.internal:6543/atoll?sslmode=require")
        #expect(full.host == "db.internal")
        #expect(full.port == 6543)
        #expect(full.username == "ann")
        #expect(full.password == "s@cret")
        #expect(full.database == "atoll")
        #expect(full.sslMode == "require")

        let short = try PostgresURL("postgresql://atoll@127.0.0.1")
        #expect(short.port == 5432)
        #expect(short.database == "atoll")
        #expect(short.sslMode == "prefer", "on loopback, TLS when the server offers it")
        #expect(try PostgresURL("postgres://atoll@localhost/atoll").sslMode == "prefer")
        // Across a network the password and every changeset travel: TLS unless said otherwise.
        #expect(try PostgresURL("postgres://atoll@db.internal/atoll").sslMode == "require")
        #expect(try PostgresURL("postgres://atoll@10.0.0.7/atoll").sslMode == "require")
        #expect(try PostgresURL("postgres://atoll@db.internal/atoll?sslmode=disable").sslMode == "disable")

        #expect(throws: PostgresStoreError.self) { try PostgresURL("mysql://x@host/db") }
        #expect(throws: PostgresStoreError.self) { try PostgresURL("postgres:///db") }
        #expect(throws: PostgresStoreError.self) { try PostgresURL("postgres://x@host/db?sslmode=verify-full-please") }
        #expect(PostgresURL.redacted("postgres://ann:secret@h/db").contains("secret") == false)
    }
}

/// What a history notification carries: the appended entries when they fit, never a payload past
/// PostgreSQL's 8,000 bytes, and an entries field that does not read back is dropped, not the change.
@Suite struct StoreChangePayloadTests {
    private func entry(_ version: Int64, title: String) -> HistoryEntry {
        let task = ObjectID(type: "Task", primaryKey: .string("t\(version)"))
        return HistoryEntry(serverVersion: version, changeset: Changeset(
            version: version, timestamp: 1_700_000_000_000, fileIdent: 3,
            instructions: [.createObject(task), .set(task, path: [.property("title")], value: .string(title))]))
    }

    @Test func smallEntriesRideAlongAndReadBack() throws {
        let change = StoreChange.history(realmID: 7, latestServerVersion: 9, entries: [entry(8, title: "a"), entry(9, title: "b")])
        let payload = change.payload
        #expect(payload.utf8.count <= StoreChange.maxPayloadBytes)
        #expect(StoreChange(payload: payload[...]) == change)
    }

    @Test func entriesThatDoNotFitAreLeftOut() throws {
        let big = entry(8, title: String(repeating: "x", count: 10_000))
        let payload = StoreChange.history(realmID: 7, latestServerVersion: 8, entries: [big]).payload
        #expect(payload.utf8.count <= StoreChange.maxPayloadBytes)
        #expect(StoreChange(payload: payload[...]) == .history(realmID: 7, latestServerVersion: 8))
    }

    /// The history's epoch travels with the announcement (it may arrive after the history was
    /// replaced); a line without one, from an older node, still reads.
    @Test func theEpochTravelsAndLinesWithoutOneStillRead() {
        let change = StoreChange.history(realmID: 7, latestServerVersion: 9, entries: [entry(9, title: "a")],
                                         epoch: SyncEpoch(rawValue: .max))
        #expect(StoreChange(payload: change.payload[...]) == change)
        #expect(StoreChange(payload: "H\t7\t12\t9"[...]) == .history(realmID: 7, latestServerVersion: 9, epoch: 12))
        #expect(StoreChange(payload: "h\t7\t9"[...]) == .history(realmID: 7, latestServerVersion: 9))
        for bad in ["H\t7\t-1\t9", "H\t7\tx\t9", "H\t7\t12"] { #expect(StoreChange(payload: bad[...]) == nil, "\(bad)") }
    }

    @Test func entriesThatDoNotReadBackAreDroppedNotTheChange() {
        for field in ["8:!!!", "x:AAAA", "8", "9:\(Data([1, 2, 3]).base64EncodedString())", "9:AA==,8:AA=="] {
            #expect(StoreChange(payload: "h\t7\t9\t\(field)"[...]) == .history(realmID: 7, latestServerVersion: 9), "\(field)")
        }
    }
}
