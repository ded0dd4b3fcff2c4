@_spi(Testing) import Atoll
import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Dates in every kind of property.
final class DatedEvent: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var at = Date(timeIntervalSince1970: 0)
    @Persisted var maybe: Date?
    @Persisted var times: List<Date>
    @Persisted var moments: MutableSet<Date>
    @Persisted var byName: Map<String, Date>
    @Persisted var mixed: AnyRealmValue
    @Persisted var mixedList: List<AnyRealmValue>

    convenience init(_ name: String, _ date: Date) {
        self.init()
        self.name = name
        at = date
        maybe = date
        times.append(objectsIn: [date, date])
        moments.insert(date)
        byName["k"] = date
        mixed = .date(date)
        mixedList.append(.date(date))
    }

    /// Every date the event holds, in the order `init` sets them.
    var dates: [Date?] {
        [at, maybe] + Array(times) + Array(moments) + [byName["k"] ?? nil, mixed.dateValue] + mixedList.map(\.dateValue)
    }
}

/// A `Date` written and read back is `==` to the one written (issue 23 §4), as in Realm: in
/// every kind of property, through queries, through sync between devices, and after an older
/// file (dates as seconds since 1970, realm file format 3) is upgraded.
@MainActor @Suite(.serialized) struct ExactDateTests {
    static func samples(_ count: Int = 400, seed: UInt64 = 23) -> [Date] {
        var rng = SeededRandom(seed: seed)
        return DateSamples.dates(count: count, using: &rng)
    }

    func write(_ dates: [Date], to realm: Realm) throws {
        try realm.write {
            for (i, date) in dates.enumerated() { realm.add(DatedEvent("e\(i)", date)) }
        }
    }

    func expectEvents(_ realm: Realm, hold dates: [Date], sourceLocation: SourceLocation = #_sourceLocation) {
        let events = realm.objects(DatedEvent.self)
        #expect(events.count == dates.count, sourceLocation: sourceLocation)
        for (i, date) in dates.enumerated() {
            guard let event = events.where({ $0.name == "e\(i)" }).first else {
                Issue.record("e\(i) is missing", sourceLocation: sourceLocation)
                continue
            }
            #expect(event.dates == Array(repeating: date, count: 8), "e\(i): \(date.timeIntervalSinceReferenceDate)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func aDateReadsBackEqualInEveryKindOfProperty() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [DatedEvent.self])
        let dates = Self.samples()
        do { try write(dates, to: try Realm(configuration: configuration)) }
        expectEvents(try Realm(configuration: configuration), hold: dates)
    }

    /// A query's `==` on a stored date matches it (typed and string queries, collections, mixed),
    /// and sorting, `min`/`max` and `distinct` see the dates as `Date` orders them.
    @Test func queriesSeeTheExactDates() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: [DatedEvent.self]))
        let dates = Self.samples(200)
        try write(dates, to: realm)
        let events = realm.objects(DatedEvent.self)
        for date in dates {
            let expected = dates.filter { $0 == date }.count
            #expect(events.where { $0.at == date }.count == expected, "\(date.timeIntervalSinceReferenceDate)")
            #expect(events.filter("at == %@", date).count == expected)
            #expect(events.filter("maybe == %@ AND ANY times == %@ AND ANY moments == %@", date, date, date).count == expected)
            #expect(events.filter("byName['k'] == %@ AND mixed == %@ AND ANY mixedList == %@", date, date, date).count == expected)
            #expect(events.where { $0.at < date }.count == dates.filter { $0 < date }.count)
        }
        #expect(events.sorted(byKeyPath: "at").map(\.at) == dates.sorted())
        #expect(events.sorted(byKeyPath: "mixed").map { $0.mixed.dateValue } == dates.sorted())
        #expect(events.min(ofProperty: "at") == dates.min())
        #expect(events.max(ofProperty: "maybe") == dates.max())
        #expect(events.distinct(by: ["at"]).count == Set(dates).count)
        let latest = try #require(dates.max())
        #expect(events.filter("times.@max == %@", latest).count == dates.filter { $0 == latest }.count)
    }

    /// A file written before format 4 held dates as seconds since 1970 (columns as REAL, mixed
    /// values tagged 7). Opened for writing it is upgraded in place, each date becoming what the
    /// old version read back; opened read-only it is refused.
    @Test func aFormat3FileIsUpgradedToTheDatesItHeld() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [DatedEvent.self])
        let path = try #require(configuration.fileURL).path
        let dates = Self.samples(100)
        var ids: [ObjectId] = []
        do {
            let realm = try Realm(configuration: configuration)
            try write(dates, to: realm)
            ids = dates.indices.map { i in realm.objects(DatedEvent.self).where { $0.name == "e\(i)" }.first!._id }
        }
        // What format 3 stored: REAL seconds since 1970 (Date's own plus 978,307,200, the way
        // `timeIntervalSince1970` computes it) and mixed blobs with the old tag.
        var sql = """
            UPDATE class_DatedEvent SET at = at + 978307200.0, maybe = maybe + 978307200.0;
            UPDATE list_DatedEvent_times SET value = value + 978307200.0;
            UPDATE set_DatedEvent_moments SET value = value + 978307200.0;
            UPDATE map_DatedEvent_byName SET value = value + 978307200.0;
            UPDATE _atoll_meta SET value = 3 WHERE key = 'format';

            """
        for (id, date) in zip(ids, dates) {
            let any = Self.hex(DateSamples.legacyEncoding(.date(date)))
            sql += "UPDATE class_DatedEvent SET mixed = X'\(any)' WHERE _id = X'\(Self.hex(id.bytes))';\n"
            sql += "UPDATE list_DatedEvent_mixedList SET value = X'\(any)' WHERE owner = (SELECT _row FROM class_DatedEvent WHERE _id = X'\(Self.hex(id.bytes))');\n"
        }
        try RawSQLite.execute(sql, path: path)

        var readOnly = configuration
        readOnly.readOnly = true
        let refused = try #require(throws: Realm.Error.self) { try Realm(configuration: readOnly) }
        #expect(refused.code == .fileFormatUpgradeRequired)

        let legacy = dates.map(DateSamples.legacy)
        #expect(legacy != dates, "some samples lose a bit through seconds since 1970")
        do { expectEvents(try Realm(configuration: configuration), hold: legacy) }
        #expect(try RawSQLite.fetch("SELECT value FROM _atoll_meta WHERE key = 'format'", path: path) == [["4"]])
    }

    @Test func aFileOfANewerFormatIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [DatedEvent.self])
        do { _ = try Realm(configuration: configuration) }
        try RawSQLite.execute("UPDATE _atoll_meta SET value = 5 WHERE key = 'format'", path: try #require(configuration.fileURL).path)
        let newer = try #require(throws: Realm.Error.self) { try Realm(configuration: configuration) }
        #expect(newer.code == .unsupportedFileFormatVersion)
    }

    static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private func open(_ user: User, _ behavior: Realm.OpenBehavior) async throws -> Realm {
        var configuration = user.configuration(partitionValue: "dates")
        configuration.objectTypes = [DatedEvent.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    private func openFlexible(_ server: SyncTestServer, _ device: String) async throws -> Realm {
        let user = try await server.app(device: device).login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [DatedEvent.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    }

    @Test func datesSyncExactlyBetweenDevices() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let dates = Self.samples(300)
            let realmA = try await open(frodo, .never)
            try write(dates, to: realmA)
            try await realmA.syncSession!.wait(for: .upload)
            let realmB = try await open(sam, .always)
            expectEvents(realmB, hold: dates)
            // And back: an element erased by its exact date on B is gone on A.
            let first = try #require(realmB.objects(DatedEvent.self).where { $0.name == "e0" }.first)
            try realmB.write { first.moments.remove(dates[0]) }
            try await realmB.syncSession!.wait(for: .upload)
            try await realmA.syncSession!.wait(for: .download)
            #expect(realmA.objects(DatedEvent.self).where { $0.name == "e0" }.first?.moments.count == 0)
        }
    }

    /// The server evaluates subscriptions (sent as query text) over the exact dates: a
    /// subscription on one date brings exactly the events of that date.
    @Test func aFlexibleSubscriptionOnADateMatchesExactly() async throws {
        try await withSyncTestServer { server in
            let base = Date().timeIntervalSinceReferenceDate
            // Neighbouring dates: seconds since 1970 would make them one.
            let dates = (0..<6).map { i in Date(timeIntervalSinceReferenceDate: (0..<i).reduce(base) { d, _ in d.nextUp }) }
            let writer = try await openFlexible(server, "frodo")
            let all = writer.subscriptions
            try await all.update { all.append(QuerySubscription<DatedEvent>(name: "all")) }
            try write(dates, to: writer)
            try await writer.syncSession!.wait(for: .upload)

            let reader = try await openFlexible(server, "sam")
            let subscriptions = reader.subscriptions
            try await subscriptions.update {
                subscriptions.append(QuerySubscription<DatedEvent>(name: "one") { $0.at == dates[3] })
            }
            #expect(reader.objects(DatedEvent.self).map(\.name) == ["e3"])
        }
    }
}
