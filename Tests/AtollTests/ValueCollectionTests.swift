@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Testing

final class Scoreboard: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var scores: List<Int>
    @Persisted var words: List<String>
    @Persisted var maybe: List<Double?>
    @Persisted var tags: MutableSet<String>
    @Persisted var mixed: List<AnyRealmValue>
}

/// Lists and sets of values as full collections: queries on `self`, sorting, distinct values,
/// aggregates, notifications, freezing.
@Suite struct ValueCollectionTests {
    private func board() throws -> (TestRealm, Realm, Scoreboard) {
        let test = try TestRealm(objectTypes: [Scoreboard.self])
        let realm = try test.open()
        let board = Scoreboard(value: ["name": "b"])
        board.scores.append(objectsIn: [5, 1, 9, 1, 7])
        board.words.append(objectsIn: ["pear", "Apple", "fig", "apple"])
        board.maybe.append(objectsIn: [2.5, nil, 0.5])
        board.tags.insert(objectsIn: ["b", "a", "c"])
        board.mixed.append(objectsIn: [.int(3), .string("x"), .double(1.5), .none])
        try realm.write { realm.add(board) }
        return (test, realm, board)
    }

    @Test func filterSortAndDistinctWorkOnSelf() throws {
        let (test, _, board) = try board()
        defer { _ = test }
        #expect(Array(board.scores.filter("self > 4")) == [5, 9, 7])
        #expect(Array(board.scores.sorted(ascending: true)) == [1, 1, 5, 7, 9])
        #expect(Array(board.scores.sorted(ascending: false)) == [9, 7, 5, 1, 1])
        #expect(Array(board.scores.distinct()) == [5, 1, 9, 7])
        #expect(Array(board.scores.filter("self < 8").sorted(ascending: false).distinct()) == [7, 5, 1])
        #expect(Array(board.words.filter("self BEGINSWITH[c] 'a'")) == ["Apple", "apple"])
        #expect(Array(board.maybe.filter("self != nil").sorted(ascending: true)) == [0.5, 2.5])
        #expect(Array(board.tags.sorted(ascending: true)) == ["a", "b", "c"])
        #expect(Array(board.mixed.filter("self > 1")) == [.int(3), .double(1.5)])
        #expect(board.scores.index(matching: "self > 8") == 2)
        #expect(board.words.index(matching: "self == 'nope'") == nil)
    }

    @Test func aggregates() throws {
        let (test, _, board) = try board()
        defer { _ = test }
        #expect(board.scores.min() == 1)
        #expect(board.scores.max() == 9)
        #expect(board.scores.sum() == 23)
        let average: Double? = board.scores.average()
        #expect(average == 4.6)
        #expect(board.words.min() == "Apple")
        #expect(board.tags.max() == "c")
        let filtered = board.scores.filter("self > 4")
        #expect(filtered.sum() == 21 && filtered.min() == 5)
        // Unmanaged lists aggregate too.
        let loose = List<Int>()
        loose.append(objectsIn: [2, 4])
        #expect(loose.sum() == 6 && loose.max() == 4)
    }

    @Test func resultsOfValuesAreLive() throws {
        let (test, realm, board) = try board()
        defer { _ = test }
        let high = board.scores.filter("self >= 7")
        #expect(high.count == 2)
        try realm.write { board.scores.append(10) }
        #expect(Array(high) == [9, 7, 10])
        try realm.write { board.scores.removeAll() }
        #expect(high.isEmpty)
    }

    @Test func observersSeeInsertionsDeletionsAndReplacements() throws {
        let (test, realm, board) = try board()
        defer { _ = test }
        var changes: [String] = []
        let token = board.scores.observe { change in
            switch change {
            case .initial(let list): changes.append("initial \(list.count)")
            case .update(let list, let deletions, let insertions, let modifications):
                changes.append("\(list.count) d\(deletions) i\(insertions) m\(modifications)")
            case .error: changes.append("error")
            }
        }
        defer { token.invalidate() }
        try realm.write { board.scores.append(4) }
        realm.refresh()
        try realm.write { board.scores[0] = 50 }
        realm.refresh()
        try realm.write { board.scores.remove(at: 1) }
        realm.refresh()
        #expect(changes == ["initial 5", "6 d[] i[5] m[]", "6 d[] i[] m[0]", "5 d[1] i[] m[]"])
    }

    @Test func frozenValueCollectionsKeepTheirSnapshot() throws {
        let (test, realm, board) = try board()
        defer { _ = test }
        let frozen = board.scores.freeze()
        try realm.write { board.scores.append(100) }
        #expect(frozen.isFrozen && !board.scores.isFrozen)
        #expect(Array(frozen) == [5, 1, 9, 1, 7])
        #expect(Array(frozen.filter("self > 4")) == [5, 9, 7])
        #expect(frozen.thaw()?.count == 6)
        #expect(board.tags.freeze().count == 3)
    }

    @Test func badQueriesOnValuesAreErrors() throws {
        let (test, _, board) = try board()
        defer { _ = test }
        #expect(throws: Realm.Error.self) { try board.scores._valueResults.filter(query: "name == 'x'") }
        #expect(throws: Realm.Error.self) { try board.scores._valueResults.filter(query: "self BEGINSWITH 'a'") }
    }
}

final class PriceList: Object {
    @Persisted var prices: Map<String, Double>
}

@Suite struct ValueMapTests {
    @Test func mapsOfValuesAreQueriedSortedAndAggregated() throws {
        let test = try TestRealm(objectTypes: [PriceList.self])
        let realm = try test.open()
        let list = PriceList()
        try realm.write {
            realm.add(list)
            list.prices["tea"] = 2.5
            list.prices["cake"] = 4
            list.prices["water"] = 1
        }
        #expect(Array(list.prices.filter("self > 2")) == [4, 2.5], "values in key order")
        #expect(Array(list.prices.sorted(ascending: true)) == [1, 2.5, 4])
        #expect(list.prices.min() == 1 && list.prices.max() == 4 && list.prices.sum() == 7.5)
        let average: Double? = list.prices.average()
        #expect(average == 2.5)
    }
}

/// Collections of values in generic code: `RealmCollection` and `AnyRealmCollection`.
@Suite struct ValueRealmCollectionTests {
    private func highest<C: RealmCollection>(_ collection: C, above floor: Int) -> [Int] where C.Element == Int {
        Array(collection.filter("self > %d", floor).where { $0 < 100 }.sorted(ascending: false))
    }

    @Test func genericCodeRunsOverListsSetsAndResultsOfValues() throws {
        let test = try TestRealm(objectTypes: [Scoreboard.self])
        let realm = try test.open()
        let board = Scoreboard(value: ["name": "g"])
        board.scores.append(objectsIn: [3, 8, 150, 5])
        try realm.write { realm.add(board) }
        #expect(highest(board.scores, above: 4) == [8, 5])
        #expect(highest(board.scores.filter("self != 8"), above: 4) == [5])
        let any = AnyRealmCollection(board.scores)
        #expect(any.count == 4 && any.index(matching: "self > 7") == 1)
        #expect(Array(any.filter("self < 6")) == [3, 5])
        var seen = 0
        let token = any.observe { _ in seen += 1 }
        try realm.write { board.scores.append(1) }
        realm.refresh()
        token.invalidate()
        #expect(seen == 2)
        #expect(any.freeze().isFrozen)
    }
}
