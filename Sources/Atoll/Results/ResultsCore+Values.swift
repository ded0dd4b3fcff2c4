import AtollCore
import Foundation

/// Results over a collection of values (`List<Int>`, `MutableSet<String>`, a map's values): the
/// collection is read whole and queried in memory by the same evaluator the server runs, as
/// objects of one property, `self` (`filter("self > 1")`, `SORT(self DESC)`, `DISTINCT(self)`).
/// Collections of values are small next to tables, so no SQL plan is kept for them.
extension ResultsCore {
    /// The name of the one-property type values are queried as.
    static let valuesType = "_AtollValues"

    /// The schema `self` is bound in: one property of the collection's element type.
    private func valueSchema(_ owner: _ManagedObjectState, _ index: Int) -> AtollCore.Schema {
        var element = owner.table.property(index)
        element.name = "self"
        element.collection = .single
        element.isPrimaryKey = false
        element.isIndexed = false
        // Links in a collection of mixed values are compared by key; nothing follows them.
        return try! AtollCore.Schema([ObjectSchema(name: Self.valuesType, properties: [element])])
    }

    /// `expression` checked against the values' schema, as a `Realm.Error`.
    func bindValues(_ expression: QueryExpression) throws -> BoundQuery? {
        guard case .values(let owner, let index) = base else { return nil }
        do {
            return try expression.bind(to: Self.valuesType, in: valueSchema(owner, index))
        } catch {
            throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
        }
    }

    /// The elements that match, in the query's order (the collection's order, then its sorts),
    /// each as its position in the collection and its stored value.
    func matchingValues(_ owner: _ManagedObjectState, _ index: Int) -> [(row: Int64, values: [SQLValue])] {
        let property = owner.table.property(index)
        do {
            let elements = try realm.store.elements(owner.table, owner.row, index)
            let rows = elements.enumerated().map { (row: Int64($0.offset), values: [$0.element.value]) }
            guard let bound = try bindValues(expression) else { return rows }
            return bound.run(on: rows, values: { row in ["self": (try? realm.instructionValue(property, row.values[0])) ?? .null] },
                             resolver: RealmObjectResolver(realm: realm))
        } catch {
            preconditionFailure("\(error)")
        }
    }
}
