import AtollCore
import Foundation

/// The link between a managed object accessor and its row: which realm, table and row, and a cache
/// of the row's values valid for one snapshot.
public final class _ManagedObjectState {
    let realm: Realm
    let table: TableInfo
    let row: Int64
    private var cache: [SQLValue]?
    private var cacheStamp = -1
    /// Managed collection accessors handed out, so repeated reads return the same instance.
    var collections: [Int: AnyObject] = [:]
    /// The row's Swift Observation registrar, once a read registered it (ObservationRegistry.swift).
    @exclusivity(unchecked) var observation: RowObservation?

    /// The bound probe instance of the object's class.
    @usableFromInline var _probe: ObjectBase { table.probe }

    init(realm: Realm, table: TableInfo, row: Int64, prefetched: [SQLValue]? = nil) {
        self.realm = realm
        self.table = table
        self.row = row
        if let prefetched {
            cache = prefetched
            cacheStamp = realm.stamp
        }
    }

    var objectSchema: AtollCore.ObjectSchema { table.schema }

    /// The row's values in the realm's current snapshot, or `nil` when the row is gone.
    func values() -> [SQLValue]? {
        realm.verifyThread()
        return realm.connection.serialized {
            if cacheStamp == realm.stamp, let cache { return cache }
            let fetched = try? realm.store.values(table, row)
            cache = fetched
            cacheStamp = realm.stamp
            return fetched
        }
    }

    /// The accessor of collection property `index`, made once per object accessor.
    func collection<C: AnyObject>(_ index: Int, _ make: () -> C) -> C {
        realm.connection.serialized {
            if let cached = collections[index] as? C { return cached }
            let made = make()
            collections[index] = made
            return made
        }
    }

    var isInvalidated: Bool { values() == nil }

    private func liveValues(_ index: Int) -> [SQLValue] {
        guard let values = values() else {
            preconditionFailure("Object of type '\(table.name)' has been deleted or invalidated (reading '\(table.property(index).name)')")
        }
        return values
    }

    func scalar(at index: Int) -> Value {
        let raw = liveValues(index)[table.columnPosition[index]!]
        return Value(sql: raw, type: table.property(index).type) ?? .null
    }

    func stored(at index: Int) -> _StoredElement {
        let property = table.property(index)
        if property.type == .any { return realm.mixedElement(scalar(at: index)) }
        guard property.type == .object else { return .value(scalar(at: index)) }
        guard case .integer(let target) = liveValues(index)[table.columnPosition[index]!],
              let targetTable = realm.coordinator.table(named: property.objectType ?? "") else { return .value(.null) }
        return .object(realm.materialize(targetTable, row: target))
    }

    func setScalar(_ value: Value, at index: Int) {
        guard let transaction = realm.requireWrite("modify '\(table.name).\(table.property(index).name)'") else { return }
        realm.perform(transaction) { try realm.setField(self, index, value, transaction) }
    }

    func setStored(_ stored: _StoredElement, at index: Int) {
        if table.property(index).type == .any {
            guard let transaction = realm.requireWrite("modify '\(table.name).\(table.property(index).name)'") else { return }
            realm.perform(transaction) { try realm.setMixed(self, index, stored, transaction) }
            return
        }
        switch stored {
        case .value(let value): setScalar(value, at: index)
        case .object(let object):
            guard let transaction = realm.requireWrite("modify '\(table.name).\(table.property(index).name)'") else { return }
            realm.perform(transaction) { try realm.setLink(self, index, object, transaction) }
        case .list, .map:
            realm.requireWrite("modify '\(table.name).\(table.property(index).name)'")?
                .fail(Realm.Error(.invalidValue, "'\(table.name).\(table.property(index).name)' cannot hold a nested collection"))
        }
    }

    func invalidateCache() { cacheStamp = -1 }
}
