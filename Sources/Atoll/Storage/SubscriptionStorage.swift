import AtollCore
import Foundation

// Flexible-sync subscription sets in the realm file.
//
// Every `update` of the subscriptions commits a new set version (1, 2, …) holding a copy of the
// previous set with the block's changes. Version 0 means no set was ever committed: it is complete
// and empty. A version is pending until the server completes it (its data is downloaded) or
// rejects it (error). A pending version is superseded as soon as a newer one is committed, and
// every older version once a newer one completes; superseded versions keep their row (their state)
// but not their subscriptions.
//
// The rows record no history and never sync as data.

/// One subscription of a committed (or draft) set.
struct StoredSubscription: Equatable {
    var id: ObjectId
    var name: String?
    var objectType: String
    /// Query text as sent to the server, arguments inlined.
    var query: String
    var createdAt: Date
    var updatedAt: Date
}

/// Where a set version stands with the server.
enum StoredSubscriptionState: Equatable {
    case pending
    case complete
    case error(String)
    case superseded
}

/// A committed set version and its subscriptions, in the order they were added.
struct StoredSubscriptionSet: Equatable {
    var version: Int64
    var subscriptions: [StoredSubscription]
    /// The local version of the commit that made the set: local changesets before it were written
    /// under the previous set, and reach the server before this one does (0: no such order).
    var clientVersion: Int64 = 0

    static let empty = StoredSubscriptionSet(version: 0, subscriptions: [])
}

/// The SQL of the subscription tables, on any connection to the file (a realm's, whose snapshot
/// it reads, or a fresh one that sees the newest commit).
enum SubscriptionStorage {
    static let setsTable = "_atoll_subscription_sets"
    static let subscriptionsTable = "_atoll_subscriptions"

    static func tablesExist(_ connection: Connection) throws -> Bool {
        try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(setsTable)]) != nil
    }

    /// Creates the tables if the file lacks them (the installer creates them with every file).
    static func createTables(_ connection: Connection) throws {
        for statement in InternalTables.subscriptionStatements { try connection.execute(statement) }
    }

    /// The newest committed set, or `nil` when none was ever committed.
    static func latest(_ connection: Connection) throws -> StoredSubscriptionSet? {
        guard try tablesExist(connection) else { return nil }
        let newest: [SQLValue]?
        do {
            newest = try connection.fetchOne("SELECT version, client_version FROM \(setsTable) ORDER BY version DESC LIMIT 1")
        } catch {
            // A file not yet brought to format 4 (opened read-only) has no `client_version`: 0.
            newest = try connection.fetchOne("SELECT version, 0 FROM \(setsTable) ORDER BY version DESC LIMIT 1")
        }
        guard let newest, case .integer(let version) = newest[0] else { return nil }
        var clientVersion: Int64 = 0
        if case .integer(let committedAt) = newest[1] { clientVersion = committedAt }
        let rows = try connection.fetchAll("""
            SELECT id, name, object_type, query, created_at, updated_at FROM \(subscriptionsTable)
            WHERE set_version = ? ORDER BY position
            """, [.integer(version)])
        return StoredSubscriptionSet(version: version, subscriptions: try rows.map(subscription), clientVersion: clientVersion)
    }

    private static func subscription(_ row: [SQLValue]) throws -> StoredSubscription {
        guard case .text(let id) = row[0], let objectId = try? ObjectId(string: id),
              case .text(let objectType) = row[2], case .text(let query) = row[3],
              case .real(let created) = row[4], case .real(let updated) = row[5] else {
            throw Realm.Error(.invalidDatabase, "a stored flexible-sync subscription is damaged")
        }
        var name: String?
        if case .text(let text) = row[1] { name = text }
        return StoredSubscription(id: objectId, name: name, objectType: objectType, query: query,
                                  createdAt: Date(timeIntervalSinceReferenceDate: created),
                                  updatedAt: Date(timeIntervalSinceReferenceDate: updated))
    }

    static func state(of version: Int64, _ connection: Connection) throws -> StoredSubscriptionState {
        guard try tablesExist(connection) else { return .complete }
        if version == 0 {
            // The empty set is outdated once a newer set completed (the newest completed one stays
            // complete until an even newer one completes).
            let completed = try connection.fetchOne("SELECT 1 FROM \(setsTable) WHERE state = 'complete'")
            return completed == nil ? .complete : .superseded
        }
        guard let row = try connection.fetchOne("SELECT state, error FROM \(setsTable) WHERE version = ?", [.integer(version)]),
              case .text(let state) = row[0] else { return .superseded }
        switch state {
        case "pending": return .pending
        case "complete": return .complete
        case "error":
            if case .text(let message) = row[1] { return .error(message) }
            return .error("the server rejected the subscriptions")
        default: return .superseded
        }
    }

    /// Stores `subscriptions` as the next version, pending; supersedes older pending versions.
    /// Inside a write transaction, which commits as local version `clientVersion` (0 where no local
    /// writes precede it that matter: a converted file, a reset's side realm).
    static func insert(_ subscriptions: [StoredSubscription], clientVersion: Int64 = 0, _ connection: Connection) throws -> Int64 {
        let version = (try connection.fetchInt("SELECT MAX(version) FROM \(setsTable)") ?? 0) + 1
        try connection.execute("INSERT INTO \(setsTable) (version, state, error, created_at, client_version) VALUES (?, 'pending', NULL, ?, ?)",
                               [.integer(version), .real(Date().timeIntervalSinceReferenceDate), .integer(clientVersion)])
        for (position, subscription) in subscriptions.enumerated() {
            try connection.execute("""
                INSERT INTO \(subscriptionsTable) (set_version, position, id, name, object_type, query, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [
                    .integer(version), .integer(Int64(position)), .text(subscription.id.stringValue),
                    subscription.name.map(SQLValue.text) ?? .null, .text(subscription.objectType), .text(subscription.query),
                    .real(subscription.createdAt.timeIntervalSinceReferenceDate),
                    .real(subscription.updatedAt.timeIntervalSinceReferenceDate),
                ])
        }
        try connection.execute("UPDATE \(setsTable) SET state = 'superseded' WHERE version < ? AND state = 'pending'",
                               [.integer(version)])
        try dropSupersededSubscriptions(connection)
        return version
    }

    /// The server completed `version`: when it was pending it becomes complete and every older
    /// version superseded.
    static func markComplete(_ version: Int64, _ connection: Connection) throws {
        try connection.execute("UPDATE \(setsTable) SET state = 'complete', error = NULL WHERE version = ? AND state = 'pending'",
                               [.integer(version)])
        guard try state(of: version, connection) == .complete else { return }
        try connection.execute("UPDATE \(setsTable) SET state = 'superseded', error = NULL WHERE version < ? AND state != 'superseded'",
                               [.integer(version)])
        try dropSupersededSubscriptions(connection)
    }

    static func markError(_ version: Int64, message: String, _ connection: Connection) throws {
        try connection.execute("UPDATE \(setsTable) SET state = 'error', error = ? WHERE version = ? AND state = 'pending'",
                               [.text(message), .integer(version)])
    }

    private static func dropSupersededSubscriptions(_ connection: Connection) throws {
        try connection.execute("""
            DELETE FROM \(subscriptionsTable)
            WHERE set_version IN (SELECT version FROM \(setsTable) WHERE state = 'superseded')
            """)
    }
}
