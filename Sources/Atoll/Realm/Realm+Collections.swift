import AtollCore
import Foundation

/// Storage steps behind `List`, `MutableSet` and `Map` of managed objects.
extension Realm {
    func sqlElement(_ element: _StoredElement, _ state: _ManagedObjectState, _ index: Int, _ transaction: WriteTransaction) throws -> SQLValue {
        let property = state.table.property(index)
        if property.type == .any {
            return try mixedValue(element, transaction, "\(state.table.name).\(property.name)").mixedSQLValue
        }
        switch element {
        case .value(let value):
            if case .null = value {
                guard property.isOptional || property.collection == .map && property.type == .object else {
                    throw Error(.invalidValue, "'\(state.table.name).\(property.name)' cannot hold nil")
                }
                return .null
            }
            guard value.propertyType == property.type, property.type != .object else {
                throw Error(.invalidValue, "\(value.kindName) value \(value) cannot be stored in '\(state.table.name).\(property.name)' of type \(property.typeDescription)")
            }
            return value.sqlValue
        case .object(let object):
            guard property.type == .object else {
                throw Error(.invalidValue, "'\(state.table.name).\(property.name)' does not hold objects")
            }
            if let dynamic = object as? DynamicObject, dynamic.typeName != property.objectType {
                throw Error(.invalidValue, "'\(state.table.name).\(property.name)' holds '\(property.objectType ?? "")' objects, not '\(dynamic.typeName)'")
            }
            let row = try addObject(object, update: transaction.linkedAddPolicy, transaction,
                                    parent: isEmbedded(property) ? (state.table, state.row, index) : nil)
            return .integer(row)
        case .list, .map:
            throw Error(.invalidValue, "'\(state.table.name).\(property.name)' cannot hold a nested collection")
        }
    }

    func element(_ raw: SQLValue, _ property: Property) -> _StoredElement {
        if property.type == .any { return mixedElement(Value(mixedSQL: raw) ?? .null) }
        guard property.type == .object else { return .value(Value(sql: raw, type: property.type) ?? .null) }
        guard case .integer(let row) = raw, let table = coordinator.table(named: property.objectType ?? "") else { return .value(.null) }
        return .object(materialize(table, row: row))
    }

    private func collectionEdit(_ state: _ManagedObjectState, _ index: Int, _ body: (WriteTransaction, ObjectID, [PathElement]) throws -> Void) {
        guard let transaction = requireWrite("modify '\(state.table.name).\(state.table.property(index).name)'") else { return }
        perform(transaction) {
            let (id, path) = try address(state.table, state.row)
            try body(transaction, id, path + [.property(state.table.property(index).name)])
            transaction.summary.modify(state.table.name, state.row, state.table.property(index).name)
        }
    }

    // MARK: Unresolved slots

    /// Whether a collection keeps unresolved links as slots users do not see: lists and sets of
    /// objects (which never hold a real NULL). See Realm+UnresolvedLinks.swift.
    static func hidesUnresolved(_ property: Property) -> Bool {
        property.type == .object && (property.collection == .list || property.collection == .set)
    }

    /// The stored position (which instructions use) of the list element users see at `index`, or
    /// of the end of the list when `index` is the visible count; `nil` when out of range.
    func storedPosition(_ state: _ManagedObjectState, _ index: Int, at position: Int) throws -> Int64? {
        guard position >= 0 else { return nil }
        guard Self.hidesUnresolved(state.table.property(index)) else {
            let count = try store.count(state.table, state.row, index)
            return Int64(position) <= count ? Int64(position) : nil
        }
        if let stored = try store.position(state.table, state.row, index, ofVisible: position) {
            return stored
        }
        let visible = try store.count(state.table, state.row, index, visibleOnly: true)
        guard Int64(position) == visible else { return nil }
        return try store.count(state.table, state.row, index)
    }

    // MARK: Reads

    func collectionCount(_ state: _ManagedObjectState, _ index: Int) -> Int {
        verifyThread()
        observeCollection(state, index)
        let visibleOnly = Self.hidesUnresolved(state.table.property(index))
        return Int((try? store.count(state.table, state.row, index, visibleOnly: visibleOnly)) ?? 0)
    }

    func listElement(_ state: _ManagedObjectState, _ index: Int, at position: Int) -> _StoredElement {
        verifyThread()
        let count = collectionCount(state, index)
        guard position >= 0, position < count, let stored = try? storedPosition(state, index, at: position),
              let raw = try? store.listValue(state.table, state.row, index, at: stored) else {
            preconditionFailure("Index \(position) is out of bounds (must be less than \(count)).")
        }
        return element(raw, state.table.property(index))
    }

    /// Every element (lists in order, sets in insertion order) or map entry (keys sorted).
    func collectionElements(_ state: _ManagedObjectState, _ index: Int) -> [(key: String?, element: _StoredElement)] {
        verifyThread()
        observeCollection(state, index)
        let property = state.table.property(index)
        let rows = (try? store.elements(state.table, state.row, index, visibleOnly: Self.hidesUnresolved(property))) ?? []
        return rows.map { ($0.key, element($0.value, property)) }
    }

    // MARK: List

    func listInsert(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement, at position: Int) {
        collectionEdit(state, index) { transaction, id, path in
            let count = try store.count(state.table, state.row, index)
            guard let stored = try storedPosition(state, index, at: position) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds (must be less than or equal to \(collectionCount(state, index))).")
            }
            let value = try sqlElement(element, state, index, transaction)
            if stored < count { try store.shiftPositions(state.table, state.row, index, from: stored, by: 1) }
            try store.insertListValue(state.table, state.row, index, at: stored, value)
            transaction.record(.listInsert(id, path: path, index: Int(stored), value: try instructionValue(state.table.property(index), value)))
        }
    }

    func listSet(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement, at position: Int) {
        collectionEdit(state, index) { transaction, id, path in
            guard position < collectionCount(state, index), let stored = try storedPosition(state, index, at: position),
                  let old = try store.listValue(state.table, state.row, index, at: stored) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds.")
            }
            try deleteEmbedded(state.table.property(index), old, transaction)
            let value = try sqlElement(element, state, index, transaction)
            try store.setListValue(state.table, state.row, index, at: stored, value)
            transaction.record(.set(id, path: path + [.index(Int(stored))], value: try instructionValue(state.table.property(index), value)))
        }
    }

    func listRemove(_ state: _ManagedObjectState, _ index: Int, at position: Int) {
        collectionEdit(state, index) { transaction, id, path in
            guard position < collectionCount(state, index), let stored = try storedPosition(state, index, at: position),
                  let old = try store.listValue(state.table, state.row, index, at: stored) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds.")
            }
            try deleteEmbedded(state.table.property(index), old, transaction)
            try store.removeListValue(state.table, state.row, index, at: stored)
            transaction.record(.listErase(id, path: path, index: Int(stored)))
        }
    }

    /// The stored positions of a move users see from `from` to `to`: the element lands just
    /// before the one that follows it among the visible elements (or at the end).
    private func storedMove(_ state: _ManagedObjectState, _ index: Int, from: Int, to: Int) throws -> (Int64, Int64)? {
        let count = collectionCount(state, index)
        guard from >= 0, to >= 0, from < count, to < count else { return nil }
        guard Self.hidesUnresolved(state.table.property(index)) else { return (Int64(from), Int64(to)) }
        guard let storedFrom = try storedPosition(state, index, at: from) else { return nil }
        guard from != to else { return (storedFrom, storedFrom) }
        let total = try store.count(state.table, state.row, index)
        guard to < count - 1 else { return (storedFrom, total - 1) }
        // The element at `to` once `from` is taken out, and its position in that shorter list.
        guard let next = try storedPosition(state, index, at: to < from ? to : to + 1) else { return nil }
        return (storedFrom, next > storedFrom ? next - 1 : next)
    }

    func listMove(_ state: _ManagedObjectState, _ index: Int, from visibleFrom: Int, to visibleTo: Int) {
        collectionEdit(state, index) { transaction, id, path in
            guard let (storedFrom, storedTo) = try storedMove(state, index, from: visibleFrom, to: visibleTo) else {
                throw Error(.invalidValue, "Cannot move from \(visibleFrom) to \(visibleTo): the list has \(collectionCount(state, index)) elements.")
            }
            try store.moveListValue(state.table, state.row, index, from: storedFrom, to: storedTo)
            if storedFrom != storedTo { transaction.record(.listMove(id, path: path, from: Int(storedFrom), to: Int(storedTo))) }
        }
    }

    func collectionClear(_ state: _ManagedObjectState, _ index: Int) {
        collectionEdit(state, index) { transaction, id, path in
            try clearCollection(state.table, state.row, index, transaction)
            transaction.record(.clear(id, path: path))
        }
    }

    // MARK: Set

    func setInsert(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement) {
        collectionEdit(state, index) { transaction, id, path in
            let value = try sqlElement(element, state, index, transaction)
            guard try store.setElement(state.table, state.row, index, holding: value) == nil else { return }
            try store.insertSetValue(state.table, state.row, index, value)
            transaction.record(.setInsert(id, path: path, value: try instructionValue(state.table.property(index), value)))
        }
    }

    func setRemove(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement) {
        collectionEdit(state, index) { transaction, id, path in
            guard let value = setKey(element, state.table.property(index)) else { return }
            guard let element = try store.setElement(state.table, state.row, index, holding: value) else { return }
            transaction.record(.setErase(id, path: path, value: try instructionValue(state.table.property(index), value)))
            try store.removeSetElement(state.table, index, element)
        }
    }

    func setContains(_ state: _ManagedObjectState, _ index: Int, _ element: _StoredElement) -> Bool {
        verifyThread()
        observeCollection(state, index)
        guard let value = setKey(element, state.table.property(index)) else { return false }
        return (try? store.setElement(state.table, state.row, index, holding: value)) ?? nil != nil
    }

    /// The stored form a set element equal to `element` has; `nil` when none can be (an
    /// unmanaged object).
    private func setKey(_ element: _StoredElement, _ property: Property) -> SQLValue? {
        if property.type == .any { return mixedKey(element)?.mixedSQLValue }
        switch element {
        case .value(let v): return v.sqlValue
        case .object(let o): return o._managedState.map { .integer($0.row) }
        case .list, .map: return nil
        }
    }

    // MARK: Map

    func mapSet(_ state: _ManagedObjectState, _ index: Int, key: String, _ element: _StoredElement) {
        collectionEdit(state, index) { transaction, id, path in
            try deleteEmbedded(state.table.property(index), try store.mapValue(state.table, state.row, index, key: key), transaction)
            let value = try sqlElement(element, state, index, transaction)
            try store.setMapValue(state.table, state.row, index, key: key, value)
            transaction.record(.set(id, path: path + [.key(key)], value: try instructionValue(state.table.property(index), value)))
        }
    }

    func mapRemove(_ state: _ManagedObjectState, _ index: Int, key: String) {
        collectionEdit(state, index) { transaction, id, path in
            guard let old = try store.mapValue(state.table, state.row, index, key: key) else { return }
            try deleteEmbedded(state.table.property(index), old, transaction)
            try store.removeMapValue(state.table, state.row, index, key: key)
            transaction.record(.mapErase(id, path: path, key: key))
        }
    }

    func mapValue(_ state: _ManagedObjectState, _ index: Int, key: String) -> _StoredElement? {
        verifyThread()
        observeCollection(state, index)
        guard let raw = try? store.mapValue(state.table, state.row, index, key: key) else { return nil }
        return element(raw, state.table.property(index))
    }

    // MARK: Whole collections

    /// Replaces a collection's contents with unmanaged contents (adding an object, or assigning a
    /// collection property).
    func replaceCollection(_ state: _ManagedObjectState, _ index: Int, _ content: _FieldContent, _ transaction: WriteTransaction) throws {
        let (id, basePath) = try address(state.table, state.row)
        let path = basePath + [.property(state.table.property(index).name)]
        let existing = try store.count(state.table, state.row, index)
        if existing > 0 {
            try clearCollection(state.table, state.row, index, transaction)
            transaction.record(.clear(id, path: path))
        }
        let property = state.table.property(index)
        switch content {
        case .elements(let elements):
            var seen: Set<SQLValue> = []
            for (position, element) in elements.enumerated() {
                let value = try sqlElement(element, state, index, transaction)
                if property.collection == .set {
                    guard seen.insert(value).inserted else { continue }
                    try store.insertSetValue(state.table, state.row, index, value)
                    transaction.record(.setInsert(id, path: path, value: try instructionValue(property, value)))
                } else {
                    try store.insertListValue(state.table, state.row, index, at: Int64(position), value)
                    transaction.record(.listInsert(id, path: path, index: position, value: try instructionValue(property, value)))
                }
            }
        case .entries(let entries):
            for (key, element) in entries {
                let value = try sqlElement(element, state, index, transaction)
                try store.setMapValue(state.table, state.row, index, key: key, value)
                transaction.record(.set(id, path: path + [.key(key)], value: try instructionValue(property, value)))
            }
        default: break
        }
        if existing > 0 || content.isNonEmpty { transaction.summary.modify(state.table.name, state.row, property.name) }
        bumpStamp()
    }
}

extension _FieldContent {
    var isNonEmpty: Bool {
        switch self {
        case .elements(let e): !e.isEmpty
        case .entries(let e): !e.isEmpty
        default: false
        }
    }
}
