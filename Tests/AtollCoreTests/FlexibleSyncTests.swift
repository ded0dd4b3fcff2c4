@testable import AtollCore
import Foundation
import Testing

/// Flexible sync's pure part: query sets checked against the schema and rules, what they match,
/// and catching a client up with filtered history plus a view change.
@Suite struct FlexibleSyncTests {
    static let schema = ["Item": MergeFixture.item, "Address": MergeFixture.address]

    static func querySet(_ queries: [String], rules: FlexibleSync.Rules = FlexibleSync.Rules(), version: Int64 = 1) throws(FlexibleSyncError) -> FlexibleQuerySet {
        try FlexibleQuerySet(version: version, queries: queries.map { TypeQuery(objectType: "Item", query: $0) }, schema: schema, rules: rules)
    }

    /// A state with items a…f: title, count and a flag.
    static func items() -> ReplicaState {
        var state = ReplicaState()
        for instruction in MergeFixture.schemaInstructions { state.apply(instruction) }
        for (i, key) in ["a", "b", "c", "d", "e", "f"].enumerated() {
            let id = MergeFixture.id(key)
            state.apply(.createObject(id))
            state.apply(.set(id, path: [.property("title")], value: .string(i % 2 == 0 ? "even" : "odd")))
            state.apply(.set(id, path: [.property("count")], value: .int(Int64(i))))
        }
        return state
    }

    static func keys(_ ids: Set<ObjectID>) -> [String] {
        ids.compactMap { if case .string(let s) = $0.primaryKey { s } else { nil } }.sorted()
    }

    /// `@links` and SUBQUERY evaluate on the server's state (backlinks indexed once per evaluation);
    /// `@links` is never a queryable field, and a SUBQUERY's collection is checked like any field.
    @Test func backlinksAndSubqueriesMatchOnTheServer() throws {
        var state = Self.items()
        func owner(_ key: String, _ target: String) {
            state.apply(.set(MergeFixture.id(key), path: [.property("owner")],
                             value: .link(ObjectLink(objectType: "Item", primaryKey: .string(target)))))
        }
        owner("b", "a")
        owner("c", "a")
        owner("d", "b")
        #expect(Self.keys(try Self.querySet(["@links.Item.owner.@count >= 2"]).matches(in: state)) == ["a"])
        #expect(Self.keys(try Self.querySet(["SUBQUERY(@links.Item.owner, $o, $o.count > 1).@count == 1"]).matches(in: state))
            == ["a", "b"])
        let rules = FlexibleSync.Rules(queryableFields: ["title", "names"])
        #expect(throws: FlexibleSyncError.self) { try Self.querySet(["@links.Item.owner.@count > 0"], rules: rules) }
        #expect(throws: FlexibleSyncError.self) { try Self.querySet(["SUBQUERY(links, $l, $l.title == 'x').@count > 0"], rules: rules) }
        _ = try Self.querySet(["SUBQUERY(names, $n, $n == 'x').@count > 0"], rules: rules)
    }

    @Test func matchesTheUnionOfTheQueriesOfAType() throws {
        let set = try Self.querySet(["title == 'even'", "count >= 5"])
        #expect(Self.keys(set.matches(in: Self.items())) == ["a", "c", "e", "f"])
    }

    @Test func absentFieldsMatchTheirDefaults() throws {
        // `flag` is never set: it holds its default, null (optional), and `count` of a new object 0.
        var state = Self.items()
        state.apply(.createObject(MergeFixture.id("z")))
        #expect(Self.keys(try Self.querySet(["count == 0"]).matches(in: state)) == ["a", "z"])
        #expect(Self.keys(try Self.querySet(["flag == nil AND title == ''"]).matches(in: state)) == ["z"])
    }

    /// The configuration's default rules, `true` and `false`, are the constant predicates.
    @Test func trueAndFalseRulesAreConstants() throws {
        let all = FlexibleSync.Rules(readRules: [(type: "Item", query: "true")], userID: "u")
        #expect(try Self.querySet(["TRUEPREDICATE"], rules: all).matches(in: Self.items()).count == Self.items().primaryKeys(of: "Item").count)
        let none = FlexibleSync.Rules(readRules: [(type: nil, query: " FALSE ")], userID: "u")
        #expect(try Self.querySet(["TRUEPREDICATE"], rules: none).matches(in: Self.items()).isEmpty)
    }

    @Test func readRulesNarrowWhatMatches() throws {
        let rules = FlexibleSync.Rules(readRules: [(type: "Item", query: "title == %user.id")], userID: "odd")
        #expect(Self.keys(try Self.querySet(["TRUEPREDICATE"], rules: rules).matches(in: Self.items())) == ["b", "d", "f"])
        // A rule that cannot apply to the type (no such property) lets no one read it.
        let broken = FlexibleSync.Rules(readRules: [(type: nil, query: "ownerId == %user.id")], userID: "u")
        #expect(try Self.querySet(["TRUEPREDICATE"], rules: broken).matches(in: Self.items()).isEmpty)
    }

    @Test(arguments: [
        ("Nope", "TRUEPREDICATE", "knows no such type"),
        ("Address", "TRUEPREDICATE", "embedded type"),
        ("Item", "title ==", "invalid query"),
        ("Item", "missing == 1", "invalid query"),
        ("Item", "count > 1 SORT(count ASC)", "SORT, DISTINCT and LIMIT"),
    ])
    func refusesQueriesTheServerCannotRun(type: String, query: String, message: String) {
        #expect {
            try FlexibleQuerySet(version: 1, queries: [TypeQuery(objectType: type, query: query)], schema: Self.schema, rules: FlexibleSync.Rules())
        } throws: { error in
            (error as? FlexibleSyncError)?.message.contains(message) == true
        }
    }

    @Test func onlyQueryableFieldsMayBeQueried() throws {
        let rules = FlexibleSync.Rules(queryableFields: ["title", "Item.count"])
        _ = try Self.querySet(["title == 'x' AND count > 1"], rules: rules)
        #expect(throws: FlexibleSyncError.self) { try Self.querySet(["flag == true"], rules: rules) }
        #expect {
            try Self.querySet(["title == 'x' OR NOT (flag == true)"], rules: rules)
        } throws: { error in
            (error as? FlexibleSyncError)?.message.contains("'flag' is not a queryable field") == true
        }
    }

    @Test func viewChangeErasesWhatLeftAndCreatesWhatCameWhole() throws {
        var state = Self.items()
        let a = MergeFixture.id("a")
        state.apply(.listInsert(a, path: [.property("names")], index: 0, value: .string("t")))
        state.apply(.set(a, path: [.property("address")], value: .object(["city": .string("Oslo")])))
        let held: Set = [MergeFixture.id("b"), MergeFixture.id("gone")]
        let change = FlexibleSync.viewChange(from: held, to: [a], in: state)
        #expect(change.first == .eraseObject(MergeFixture.id("b")))  // "gone" does not exist: nothing to erase
        #expect(change.contains(.createObject(a)))
        #expect(change.contains(.listInsert(a, path: [.property("names")], index: 0, value: .string("t"))))
        #expect(!change.contains(.eraseObject(MergeFixture.id("gone"))))
    }

    @Test func filterKeepsSchemaAndTheViewsObjects() {
        let a = MergeFixture.id("a"), b = MergeFixture.id("b")
        let changeset = Changeset(version: 1, timestamp: 1, instructions: [
            .addColumn(type: "Item", Property(name: "extra", type: .int)),
            .set(a, path: [.property("count")], value: .int(1)),
            .set(b, path: [.property("count")], value: .int(2)),
        ])
        #expect(FlexibleSync.filter(changeset, to: [b]).instructions == [changeset.instructions[0], changeset.instructions[2]])
    }

    /// The state's objects in `ids` only (schema whole), as a client holding that view has them.
    static func restricted(_ state: ReplicaState, to ids: Set<ObjectID>) -> ReplicaState {
        var out = ReplicaState()
        for schema in state.schema.values.sorted(by: { $0.name < $1.name }) { out.apply(.addTable(schema)) }
        for id in ids.sorted(by: ObjectID.canonicalOrder) {
            for instruction in FlexibleSync.instructions(creating: id, in: state) { out.apply(instruction) }
        }
        return out
    }

    /// The catch-up the server sends takes a client from (history at c, old view) to exactly
    /// (history at S, new view), for random histories, queries and versions, with and without a
    /// read rule, whether the server already checked what the client holds or has only its word.
    @Test(arguments: [false, true]) func catchingUpGivesExactlyTheNewView(heldIsClaim: Bool) throws {
        let queries = ["title == 'x'", "count > 5", "flag == true", "TRUEPREDICATE", "title IN {'y', 'z'} OR count < 0",
                       "owner.title == 'x'", "address.city == 'Oslo'", "FALSEPREDICATE"]
        for seed in 0..<200 as Range<UInt64> {
            var generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
            var state = ReplicaState()
            for instruction in MergeFixture.schemaInstructions { state.apply(instruction) }
            var states = [state]
            var entries: [HistoryEntry] = []
            for version in 1...30 as ClosedRange<Int64> {
                let instructions = generator.transaction(on: &state)
                entries.append(HistoryEntry(serverVersion: version, changeset: Changeset(version: version, timestamp: version, fileIdent: 1, instructions: instructions)))
                states.append(state)
            }
            let c = generator.int(0...29), s = generator.int(c...30)
            // Half the seeds hide the items whose count is 3 or more (the rule reads the object's own fields).
            let rules = seed % 2 == 0 ? FlexibleSync.Rules() : FlexibleSync.Rules(readRules: [(type: "Item", query: "count < 3")], userID: "u")
            let old = try Self.querySet([generator.pick(queries)], rules: rules, version: 1)
            let new = try Self.querySet([generator.pick(queries), generator.pick(queries)], rules: rules, version: 2)
            let held = old.matches(in: states[c])
            var client = Self.restricted(states[c], to: held)
            let plan = FlexibleSync.catchUp(
                held: held, unconfirmed: heldIsClaim ? held : [], entries: Array(entries[c..<s]), ownFile: 9, state: states[s],
                querySet: new, mayRead: rules.readAccess(in: states[s]))
            for entry in plan.entries { client.apply(entry.changeset) }
            client.apply(Changeset(version: 0, timestamp: 0, instructions: plan.viewChange))
            let matching = new.matches(in: states[s])
            #expect(client.canonicalDump() == Self.restricted(states[s], to: matching).canonicalDump(), "seed \(seed), c \(c), S \(s)")
            #expect(plan.held.subtracting(plan.unconfirmed) == matching, "seed \(seed): the session holds exactly what matches")
            #expect(plan.unconfirmed.allSatisfy { states[s].object($0) == nil }, "seed \(seed): only what the server lacks is unconfirmed")
        }
    }

    /// What a session's own upload created, it holds (its entries come back to it whole): when the
    /// query set does not match such an object, the view change erases it, as for any held object
    /// (Realm's `rerunOnOpen` sample: an upload integrated just before a set that no longer
    /// matches it); when the set matches it, it is sent whole; with no set it stays.
    @Test(arguments: ["odd", "even"]) func anObjectTheSessionCreatedLeavesTheViewWhenTheSetDoesNotMatchIt(title: String) throws {
        var state = Self.items()
        let z = MergeFixture.id("z")
        let own = Changeset(version: 3, timestamp: 1, fileIdent: 9, instructions: [
            .createObject(z), .set(z, path: [.property("title")], value: .string(title)),
        ])
        for instruction in own.instructions { state.apply(instruction) }
        let set = try Self.querySet(["title == 'even'"])
        let held = set.matches(in: Self.items())
        let plan = FlexibleSync.catchUp(held: held, unconfirmed: [], entries: [HistoryEntry(serverVersion: 7, changeset: own)],
                                        ownFile: 9, state: state, querySet: set, mayRead: { _ in true })
        #expect(plan.entries.map(\.changeset) == [own], "its own entry comes back whole")
        if title == "odd" {
            #expect(plan.viewChange == [.eraseObject(z)])
            #expect(!plan.held.contains(z))
        } else {
            #expect(plan.viewChange.first == .createObject(z))
            #expect(plan.held.contains(z))
        }
        let kept = FlexibleSync.catchUp(held: held, unconfirmed: [], entries: [HistoryEntry(serverVersion: 7, changeset: own)],
                                        ownFile: 9, state: state, querySet: nil, mayRead: { _ in true })
        #expect(kept.viewChange.isEmpty, "no set yet: the session keeps what it has")
    }

    @Test func heldObjectsRoundTrip() throws {
        let message = ClientMessage.heldObjects(HeldObjects(session: 3, objects: [
            MergeFixture.id("a"), ObjectID(type: "Other", primaryKey: .int(7)), MergeFixture.id("b"),
        ]))
        let decoded = try ClientMessage(decoding: message.encoded())
        guard case .heldObjects(let held) = decoded else { Issue.record("decoded \(decoded)"); return }
        #expect(Set(held.objects) == [MergeFixture.id("a"), ObjectID(type: "Other", primaryKey: .int(7)), MergeFixture.id("b")])
    }

    @Test func clientMergerAppliesViewChangesAndAcceptsGaps() {
        var merger = ClientMerger(fileIdent: 5, serverVersion: 2, isFlexible: true)
        let a = MergeFixture.id("a")
        let local = Changeset(version: 1, timestamp: 10, instructions: [.set(a, path: [.property("count")], value: .int(3))])
        merger.recordLocal(local)
        let remote = HistoryEntry(serverVersion: 7, changeset: Changeset(version: 4, timestamp: 9, fileIdent: 2, instructions: [
            .set(MergeFixture.id("b"), path: [.property("count")], value: .int(1)),
        ]))
        let view = HistoryEntry(serverVersion: 7, changeset: Changeset(version: 0, timestamp: 0, fileIdent: FlexibleSync.viewChangeFileIdent, instructions: [.eraseObject(a)]))
        let applied = merger.receive([remote, view])
        #expect(merger.serverVersion == 7)
        #expect(applied.count == 2)
        // The erase of an object leaving the view beats the pending change to it.
        #expect(merger.pending.allSatisfy { $0.instructions.isEmpty })
    }
}

/// Server versions come from the network: a hostile or broken server cannot make the client trap.
@Suite struct HostileDownloadTests {
    @Test(arguments: [Int64.min, -1, 0, Int64.max])
    func extremeServerVersionsDoNotTrap(version: Int64) {
        let entry = HistoryEntry(serverVersion: version, changeset: Changeset(version: 1, timestamp: 1, fileIdent: 2, instructions: []))
        _ = ClientMerger.receive(download: [entry], unuploaded: [], fileIdent: 1)
        var merger = ClientMerger(fileIdent: 1, serverVersion: Int64.max)
        _ = merger.receive([entry])
        #expect(merger.serverVersion == Int64.max)
    }
}
