import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import GRDB
import Testing

/// A store written before protocol version 2 holds dates in its history as seconds since 1970
/// (value tag 7). Opened by this server, its history is re-encoded (tag 16, seconds since 2001)
/// with each date what the old server read, which is what the clients upgraded their files to.
@Suite struct DateMigrationTests {
    static let event = ObjectSchema(name: "Event", properties: [
        Property(name: "_id", type: .int, isPrimaryKey: true, isIndexed: true),
        Property(name: "at", type: .date),
        Property(name: "times", type: .date, collection: .list),
        Property(name: "any", type: .any, isOptional: true),
    ])

    static let dates: [Date] = {
        var rng = SeededRandom(seed: 4)
        return DateSamples.dates(count: 60, using: &rng)
    }()

    /// One changeset per date: the event made, its date set, inserted in a list and in a mixed list.
    static func changesets(_ dates: [Date]) -> [Changeset] {
        [Changeset(version: 1, timestamp: 1, fileIdent: 1, instructions: [.addTable(event)])]
            + dates.enumerated().map { i, date in
                let id = ObjectID(type: "Event", primaryKey: .int(Int64(i)))
                return Changeset(version: Int64(i + 2), timestamp: 1, fileIdent: 1, instructions: [
                    .createObject(id), .set(id, path: [.property("at")], value: .date(date)),
                    .listInsert(id, path: [.property("times")], index: 0, value: .date(date)),
                    .set(id, path: [.property("any")], value: .list([.date(date)])),
                ])
            }
    }

    /// What the older server wrote: an app, a realm and its history, dates tagged 7. `blob` makes
    /// a blob literal of hex digits (SQLite's `X'…'`, PostgreSQL's `'\x…'::bytea`).
    static func rows(blob: (String) -> String) -> [String] {
        let history = changesets(dates).enumerated().map { i, changeset in
            let hex = DateSamples.legacyEncoding(changeset).map { String(format: "%02x", $0) }.joined()
            return """
                INSERT INTO history (realm_id, server_version, origin_file_ident, origin_client_version, origin_timestamp, changeset)
                VALUES ((SELECT id FROM realms WHERE path = 's:dates'), \(i + 1), 1, \(changeset.version), 1, \(blob(hex)))
                """
        }
        return ["INSERT INTO apps (id, created_at) VALUES ('dates', 0)",
                "INSERT INTO realms (app_id, path, epoch, latest_version, created_at) VALUES ('dates', 's:dates', 7, \(history.count), 0)"]
            + history
    }

    static func expectMigrated(_ store: any ServerStore, rawHistory: [Data]) async throws {
        let realm = try #require(try await store.realms(appID: "dates").first)
        let history = try await store.history(realmID: realm.id, after: 0, maxBytes: .max)
        let legacy = changesets(dates.map(DateSamples.legacy))
        #expect(history.map(\.changeset) == legacy)
        #expect(legacy != changesets(dates), "some samples lose a bit through seconds since 1970")
        #expect(rawHistory == legacy.map { $0.encoded() }, "each row re-encoded with exact dates")
    }

    @Test func sqliteReencodesHistoryDates() async throws {
        let folder = try TemporaryFolder("atoll-date-migration")
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("atoll.sqlite").path
        try SQLiteServerStore.prepareForTesting(
            path: path, upTo: "v8: the user who created each realm", rows: Self.rows { "X'\($0)'" }.joined(separator: ";\n"))
        let store = try SQLiteServerStore(path: path)
        do {
            let queue = try DatabaseQueue(path: path)
            let raw = try await queue.read { db in
                try Data.fetchAll(db, sql: "SELECT changeset FROM history ORDER BY server_version")
            }
            try queue.close()
            try await Self.expectMigrated(store, rawHistory: raw)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
    }

    @Test(postgresInstalled) func postgresReencodesHistoryDates() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let rows = Self.rows { "'\\x\($0)'::bytea" }
        try await PostgresServerStore.prepareForTesting(url: url, upTo: 5, rows: rows, logger: quietLogger)
        try await withPostgresStore(url: url) { store in
            try await Self.expectMigrated(store, rawHistory: try await store.historyBytesForTesting())
            #expect(try await store.appliedMigrationsForTesting().map(\.1).contains("dates in history as seconds since 2001"))
        }
    }
}
