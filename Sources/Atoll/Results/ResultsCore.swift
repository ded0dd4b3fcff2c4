import AtollCore
import Foundation

/// The shared, cached state behind a `Results` value: the query, and the rows it matched in the
/// realm's current snapshot.
final class ResultsCore {
    /// What the query runs over.
    enum Base {
        /// Every object of the type.
        case table
        /// The objects of a list (or set) property of one object, in its order.
        case collection(owner: _ManagedObjectState, property: Int)
        /// The objects whose link `property` (of the results' type) points at `target`: a
        /// `LinkingObjects`.
        case linking(target: _ManagedObjectState, property: Int)
        /// The values of a list, set or map (values) property of one object: queried in memory as
        /// objects with one property, `self` (ResultsCore+Values.swift).
        case values(owner: _ManagedObjectState, property: Int)

        /// The object whose row the query's first argument is (the owner or the target).
        var anchor: _ManagedObjectState? {
            switch self {
            case .table: nil
            case .collection(let owner, _), .values(let owner, _): owner
            case .linking(let target, _): target
            }
        }
    }

    let realm: Realm
    /// The object type's name; its table is looked up when the query runs, so results made before
    /// the type's first object was added still see it.
    let objectType: String
    let base: Base
    let expression: QueryExpression
    private var cache: [(row: Int64, values: [SQLValue])] = []
    private var cacheStamp = -1
    private var plan: QueryPlan?
    private var bound: BoundQuery?
    /// The Swift Observation registrar of the contents, made by the first read.
    private var observation: ContentsObservation?

    init(realm: Realm, objectType: String, base: Base = .table, expression: QueryExpression, bound: BoundQuery? = nil) {
        self.realm = realm
        self.objectType = objectType
        self.base = base
        self.expression = expression
        self.bound = bound
    }

    private var resolvedTable: TableInfo?

    /// The type's table, once it exists (a type's table never changes while the file is open).
    var table: TableInfo? {
        if let resolvedTable { return resolvedTable }
        resolvedTable = realm.coordinator.table(named: objectType)
        return resolvedTable
    }

    /// The same query over the same base, read through another realm of the file.
    func moved(to other: Realm) -> ResultsCore { descriptor.core(in: other) }

    /// What the results are, without a realm: notifiers keep this so they don't keep a realm open.
    var descriptor: ResultsDescriptor {
        var owner: ResultsDescriptor.Anchor?
        switch base {
        case .table: break
        case .collection(let state, let property): owner = .init(table: state.table, row: state.row, property: property, linking: false)
        case .linking(let state, let property): owner = .init(table: state.table, row: state.row, property: property, linking: true)
        case .values(let state, let property): owner = .init(table: state.table, row: state.row, property: property, linking: false)
        }
        return ResultsDescriptor(objectType: objectType, owner: owner, expression: expression, bound: bound)
    }

    /// Results of the same base with another query.
    func with(_ expression: QueryExpression, bound: BoundQuery?) -> ResultsCore {
        ResultsCore(realm: realm, objectType: objectType, base: base, expression: expression, bound: bound)
    }

    /// Checks that `expression` fits the schema, as a `Realm.Error`; returns the checked form.
    @discardableResult
    func validate(_ expression: QueryExpression) throws -> BoundQuery? {
        if case .values = base { return try bindValues(expression) }
        guard table != nil else { return nil }
        if let plan = realm.coordinator.plan(for: planKey(expression)) { return plan.bound }
        do {
            return try expression.bind(to: objectType, in: realm.coordinator.schema, backlinks: realm.coordinator.queryBacklinks)
        } catch {
            throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
        }
    }

    private func planKey(_ expression: QueryExpression) -> QueryPlan.Key {
        var collection: String?
        switch base {
        case .table: break
        case .collection(let owner, let property):
            collection = owner.table.collectionTable(property) + (owner.table.property(property).collection == .list ? "#list" : "#set")
        case .linking(_, let property):
            collection = "linking#\(objectType)#\(property)"
        case .values:
            preconditionFailure("values are queried in memory")
        }
        return QueryPlan.Key(objectType: objectType, collection: collection, expression: expression)
    }

    /// The SQL of the query, shared by every results of the same query on this file.
    private func makePlan(_ table: TableInfo) throws -> QueryPlan {
        if let plan { return plan }
        let key = planKey(expression)
        if let cached = realm.coordinator.plan(for: key) {
            plan = cached
            return cached
        }
        let bound: BoundQuery
        if let checked = self.bound {
            bound = checked
        } else {
            do {
                bound = try expression.bind(to: table.name, in: realm.coordinator.schema, backlinks: realm.coordinator.queryBacklinks)
            } catch {
                throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
            }
        }
        let translated: SQLQuery
        do {
            translated = try SQLTranslator.translate(bound)
        } catch {
            throw Realm.Error(.invalidQuery, "\(error)", underlying: error)
        }
        let scope: QueryPlan.Scope = switch base {
        case .table: .table
        case .collection(let owner, let property): .collection(owner: owner.table, property: property)
        case .linking(_, let property): .linking(property: property)
        case .values: preconditionFailure("values are queried in memory")
        }
        let made = QueryPlan(bound, translated: translated, table: table, scope: scope)
        realm.coordinator.store(made, for: key)
        plan = made
        return made
    }

    /// The matching rows with their values, evaluated once per snapshot.
    func rows() -> [(row: Int64, values: [SQLValue])] {
        realm.verifyThread()
        observeContents()
        realm.repinSnapshot()
        return realm.connection.serialized { evaluate() }
    }

    /// Registers a read of the contents with Swift Observation (Observation+Collections.swift).
    func observeContents() {
        if let observation { return observation.access() }
        guard let registry = realm.observations else { return }
        let made = registry.results(self, tables: observedTables, anchor: observedAnchor)
        observation = made
        made.access()
    }

    /// The tables whose changes may change the contents: the objects' table and the tables its
    /// objects link to or embed (a query or sort may read them).
    private var observedTables: [String] {
        if case .values = base { return [] }
        var names = [objectType]
        for property in table?.schema.properties ?? [] where property.type == .object {
            if let target = property.objectType, !names.contains(target) { names.append(target) }
        }
        return names
    }

    /// The row the contents hang on, and the property of it that holds them (`nil`: linking
    /// objects, which change with the origin table).
    private var observedAnchor: (state: _ManagedObjectState, property: Int?)? {
        switch base {
        case .table: nil
        case .collection(let owner, let property), .values(let owner, let property): (owner, property)
        case .linking(let target, _): (target, nil)
        }
    }

    private func evaluate() -> [(row: Int64, values: [SQLValue])] {
        if cacheStamp == realm.stamp { return cache }
        if case .values(let owner, let property) = base {
            cache = owner.isInvalidated ? [] : matchingValues(owner, property)
            cacheStamp = realm.stamp
            return cache
        }
        guard let table else { return [] }
        if let anchor = base.anchor, anchor.isInvalidated { return [] }
        do {
            let plan = try makePlan(table)
            var rows = try realm.store.rows(matching: plan, owner: base.anchor?.row)
            if !plan.post.isEmpty {
                let resolver = RealmObjectResolver(realm: realm)
                rows = plan.bound.apply(plan.post, to: rows, values: { resolver.values(table, $0.values) }, resolver: resolver)
            }
            cache = rows
        } catch {
            preconditionFailure("\(error)")
        }
        cacheStamp = realm.stamp
        return cache
    }

    func object(at position: Int, _ rows: [(row: Int64, values: [SQLValue])]) -> ObjectBase {
        realm.materialize(table!, row: rows[position].row, prefetched: rows[position].values)
    }

    /// The element at `position`: an object, or a value of a collection of values.
    func element(at position: Int, _ rows: [(row: Int64, values: [SQLValue])]) -> _StoredElement {
        if case .values(let owner, let property) = base {
            return realm.element(rows[position].values[0], owner.table.property(property))
        }
        return .object(object(at: position, rows))
    }

    /// `expression`, written with the names the app uses, with the stored names (see
    /// `ObjectBase.propertiesMapping()`).
    func storedNames(_ expression: QueryExpression) -> QueryExpression {
        if case .values = base { return expression }
        return expression.resolvingNames(from: objectType, storedProperty)
    }

    /// A key path the app wrote, with the stored names.
    func storedKeyPath(_ keyPath: String) -> QueryKeyPath {
        if case .values = base { return QueryKeyPath(keyPath) }
        return QueryKeyPath(keyPath).resolvingNames(from: objectType, storedProperty)
    }

    /// The property the app calls `name` on `type`, as the class bound to the type's table in this
    /// file declares it (or the process's class of that name, before the table exists).
    private func storedProperty(_ type: String, _ name: String) -> Property? {
        if let info = realm.coordinator.table(named: type)?.classInfo {
            return info.property(named: name) ?? info.linkingProperty(named: name)
        }
        return ClassInfo.storedProperty(type, name) ?? ClassInfo.named(type)?.linkingProperty(named: name)
    }

    /// The values of one property over the results, for aggregates.
    func aggregate(_ name: String) -> [AtollCore.Value] {
        if case .values(let owner, let index) = base {
            let property = owner.table.property(index)
            return rows().compactMap { try? realm.instructionValue(property, $0.values[0]) }.filter { !$0.isNull }
        }
        let property = storedProperty(objectType, name)?.name ?? name
        guard let table, let index = table.schema.properties.firstIndex(where: { $0.name == property }) else {
            preconditionFailure("'\(table?.name ?? "?")' has no property '\(property)'")
        }
        guard let column = table.columnPosition[index] else {
            preconditionFailure("'\(table.name).\(property)' is a collection; aggregates need a single value")
        }
        let type = table.property(index).type
        return rows().compactMap { AtollCore.Value(sql: $0.values[column], type: type) }.filter { !$0.isNull }
    }
}

extension QueryExpression {
    /// Both queries' predicates, and both's tail clauses in order.
    func and(_ other: QueryExpression) -> QueryExpression {
        let predicate: QueryPredicate = switch predicate.kind {
        case .constant(true): other.predicate
        default: self.predicate && other.predicate
        }
        return QueryExpression(predicate: predicate, clauses: clauses + other.clauses)
    }
}

/// Reads linked objects for the in-memory tail clauses (`DISTINCT`, a `SORT` after it).
struct RealmObjectResolver: ObjectResolver {
    let realm: Realm

    func object(for link: ObjectLink) -> [String: AtollCore.Value]? {
        guard let table = realm.coordinator.table(named: link.objectType),
              let row = try? realm.rowForPrimaryKey(table, link.primaryKey),
              let values = try? realm.store.values(table, row) else { return nil }
        return self.values(table, values)
    }

    /// The objects linking to `link` through `property` of `originType`, read with SQL.
    func objects(linkingTo link: ObjectLink, from originType: String, through property: String) -> [AtollCore.Value] {
        guard let target = realm.coordinator.table(named: link.objectType),
              let row = try? realm.rowForPrimaryKey(target, link.primaryKey),
              let origin = realm.coordinator.table(named: originType),
              let index = origin.schema.properties.firstIndex(where: { $0.name == property }) else { return [] }
        let columns = origin.columns.map { ", o." + origin.column($0) }.joined()
        let sql = origin.property(index).collection == .single
            ? "SELECT o._row\(columns) FROM \(origin.table) AS o WHERE o.\(origin.column(index)) = ?"
            : "SELECT o._row\(columns) FROM \(origin.table) AS o WHERE o._row IN (SELECT owner FROM \(origin.collectionTable(index)) WHERE value = ?)"
        guard let rows = try? realm.connection.fetchRows(sql, [.integer(row)]) else { return [] }
        return rows.map { .object(values(origin, $0.values)) }
    }

    /// A row as the evaluator sees an object: scalars as values, links by primary key, embedded
    /// objects inline.
    func values(_ table: TableInfo, _ row: [SQLValue]) -> [String: AtollCore.Value] {
        var result: [String: AtollCore.Value] = [:]
        for (position, index) in table.columns.enumerated() {
            let property = table.property(index)
            result[property.name] = (try? realm.instructionValue(property, row[position])) ?? .null
        }
        return result
    }
}

/// A realm-free description of results: rebuilt in a realm with ``core(in:)``.
struct ResultsDescriptor {
    /// The collection's owner or the linked target, with the property.
    struct Anchor {
        let table: TableInfo
        let row: Int64
        let property: Int
        let linking: Bool
    }

    let objectType: String
    let owner: Anchor?
    let expression: QueryExpression
    let bound: BoundQuery?

    func core(in realm: Realm) -> ResultsCore {
        var base = ResultsCore.Base.table
        if let owner {
            let state = realm.materialize(owner.table, row: owner.row)._managedState!
            base = owner.linking ? .linking(target: state, property: owner.property)
                : owner.table.property(owner.property).type == .object ? .collection(owner: state, property: owner.property)
                : .values(owner: state, property: owner.property)
        }
        return ResultsCore(realm: realm, objectType: objectType, base: base, expression: expression, bound: bound)
    }
}
