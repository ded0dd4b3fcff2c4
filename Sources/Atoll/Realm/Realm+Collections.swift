import AtollCore
import Foundation

/// Storage steps behind `List`, `MutableSet` and `Map` of managed objects.
extension Realm {
    func sqlElement(_ element: StoredElement, _ state: ManagedObjectState, _ index: Int, _ transaction: WriteTransaction) throws -> SQLValue {
        let property = state.table.property(index)
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
            let row = try addObject(object, update: .error, transaction, parent: isEmbedded(property) ? (state.table, state.row, index) : nil)
            return .integer(row)
        }
    }

    func element(_ raw: SQLValue, _ property: Property) -> StoredElement {
        guard property.type == .object else { return .value(Value(sql: raw, type: property.type) ?? .null) }
        guard case .integer(let row) = raw, let table = coordinator.table(named: property.objectType ?? "") else { return .value(.null) }
        return .object(materialize(table, row: row))
    }

    private func collectionEdit(_ state: ManagedObjectState, _ index: Int, _ body: (String, WriteTransaction, ObjectID, [PathElement]) throws -> Void) {
        guard let transaction = requireWrite("modify '\(state.table.name).\(state.table.property(index).name)'") else { return }
        perform(transaction) {
            let (id, path) = try address(state.table, state.row)
            try body(state.table.collectionTable(index), transaction, id, path + [.property(state.table.property(index).name)])
            transaction.summary.modify(state.table.name, state.row, state.table.property(index).name)
        }
    }

    // MARK: Unresolved slots

    /// Whether a collection keeps unresolved links as slots users do not see: lists and sets of
    /// objects (which never hold a real NULL). See Realm+UnresolvedLinks.swift.
    static func hidesUnresolved(_ property: Property) -> Bool {
        property.type == .object && (property.collection == .list || property.collection == .set)
    }

    /// The SQL condition selecting the slots users see.
    private static func visible(_ property: Property) -> String {
        hidesUnresolved(property) ? " AND value IS NOT NULL" : ""
    }

    /// The stored position (which instructions use) of the list element users see at `index`, or
    /// of the end of the list when `index` is the visible count; `nil` when out of range.
    func storedPosition(_ state: ManagedObjectState, _ index: Int, at position: Int) throws -> Int64? {
        let table = state.table.collectionTable(index)
        guard position >= 0 else { return nil }
        guard Self.hidesUnresolved(state.table.property(index)) else {
            let count = try connection.fetchInt("SELECT COUNT(*) FROM \(table) WHERE owner = ?", [.integer(state.row)]) ?? 0
            return Int64(position) <= count ? Int64(position) : nil
        }
        if let stored = try connection.fetchInt("SELECT pos FROM \(table) WHERE owner = ? AND value IS NOT NULL ORDER BY pos LIMIT 1 OFFSET ?",
                                                 [.integer(state.row), .integer(Int64(position))]) {
            return stored
        }
        let visible = try connection.fetchInt("SELECT COUNT(value) FROM \(table) WHERE owner = ?", [.integer(state.row)]) ?? 0
        guard Int64(position) == visible else { return nil }
        return try connection.fetchInt("SELECT COUNT(*) FROM \(table) WHERE owner = ?", [.integer(state.row)]) ?? 0
    }

    // MARK: Reads

    func collectionCount(_ state: ManagedObjectState, _ index: Int) -> Int {
        verifyThread()
        let counted = Self.hidesUnresolved(state.table.property(index)) ? "value" : "*"
        return Int((try? connection.fetchInt("SELECT COUNT(\(counted)) FROM \(state.table.collectionTable(index)) WHERE owner = ?", [.integer(state.row)])) ?? 0)
    }

    func listElement(_ state: ManagedObjectState, _ index: Int, at position: Int) -> StoredElement {
        verifyThread()
        let count = collectionCount(state, index)
        guard position >= 0, position < count, let stored = try? storedPosition(state, index, at: position),
              let raw = try? connection.fetchOne("SELECT value FROM \(state.table.collectionTable(index)) WHERE owner = ? AND pos = ?", [.integer(state.row), .integer(stored)]) else {
            preconditionFailure("Index \(position) is out of bounds (must be less than \(count)).")
        }
        return element(raw[0], state.table.property(index))
    }

    /// Every element (lists in order, sets in insertion order) or map entry (keys sorted).
    func collectionElements(_ state: ManagedObjectState, _ index: Int) -> [(key: String?, element: StoredElement)] {
        verifyThread()
        let property = state.table.property(index)
        let name = state.table.collectionTable(index)
        let sql: String = switch property.collection {
        case .list: "SELECT NULL, value FROM \(name) WHERE owner = ?\(Self.visible(property)) ORDER BY pos"
        case .set: "SELECT NULL, value FROM \(name) WHERE owner = ?\(Self.visible(property)) ORDER BY rowid"
        default: "SELECT key, value FROM \(name) WHERE owner = ? ORDER BY key"
        }
        let rows = (try? connection.fetchAll(sql, [.integer(state.row)])) ?? []
        return rows.map { row in
            var key: String?
            if case .text(let k) = row[0] { key = k }
            return (key, element(row[1], property))
        }
    }

    // MARK: List

    func listInsert(_ state: ManagedObjectState, _ index: Int, _ element: StoredElement, at position: Int) {
        collectionEdit(state, index) { table, transaction, id, path in
            let count = Int64(try connection.fetchInt("SELECT COUNT(*) FROM \(table) WHERE owner = ?", [.integer(state.row)]) ?? 0)
            guard let stored = try storedPosition(state, index, at: position) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds (must be less than or equal to \(collectionCount(state, index))).")
            }
            let value = try sqlElement(element, state, index, transaction)
            if stored < count { try shiftPositions(table, state.row, from: stored, by: 1) }
            try connection.execute("INSERT INTO \(table) (owner, pos, value) VALUES (?, ?, ?)", [.integer(state.row), .integer(stored), value])
            transaction.record(.listInsert(id, path: path, index: Int(stored), value: try instructionValue(state.table.property(index), value)))
        }
    }

    func listSet(_ state: ManagedObjectState, _ index: Int, _ element: StoredElement, at position: Int) {
        collectionEdit(state, index) { table, transaction, id, path in
            guard position < collectionCount(state, index), let stored = try storedPosition(state, index, at: position),
                  let old = try connection.fetchOne("SELECT value FROM \(table) WHERE owner = ? AND pos = ?", [.integer(state.row), .integer(stored)]) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds.")
            }
            try deleteEmbeddedElement(state, index, old[0], transaction)
            let value = try sqlElement(element, state, index, transaction)
            try connection.execute("UPDATE \(table) SET value = ? WHERE owner = ? AND pos = ?", [value, .integer(state.row), .integer(stored)])
            transaction.record(.set(id, path: path + [.index(Int(stored))], value: try instructionValue(state.table.property(index), value)))
        }
    }

    func listRemove(_ state: ManagedObjectState, _ index: Int, at position: Int) {
        collectionEdit(state, index) { table, transaction, id, path in
            guard position < collectionCount(state, index), let stored = try storedPosition(state, index, at: position),
                  let old = try connection.fetchOne("SELECT value FROM \(table) WHERE owner = ? AND pos = ?", [.integer(state.row), .integer(stored)]) else {
                throw Error(.invalidValue, "Index \(position) is out of bounds.")
            }
            try deleteEmbeddedElement(state, index, old[0], transaction)
            try removeListSlot(table, state.row, at: stored)
            transaction.record(.listErase(id, path: path, index: Int(stored)))
        }
    }

    /// Deletes the slot at stored position `position` and closes the gap.
    func removeListSlot(_ table: String, _ owner: Int64, at position: Int64) throws {
        try connection.execute("DELETE FROM \(table) WHERE owner = ? AND pos = ?", [.integer(owner), .integer(position)])
        try shiftPositions(table, owner, from: position + 1, by: -1)
    }

    /// The stored positions of a move users see from `from` to `to`: the element lands just
    /// before the one that follows it among the visible elements (or at the end).
    private func storedMove(_ state: ManagedObjectState, _ index: Int, from: Int, to: Int) throws -> (Int64, Int64)? {
        let count = collectionCount(state, index)
        guard from >= 0, to >= 0, from < count, to < count else { return nil }
        guard Self.hidesUnresolved(state.table.property(index)) else { return (Int64(from), Int64(to)) }
        guard let storedFrom = try storedPosition(state, index, at: from) else { return nil }
        guard from != to else { return (storedFrom, storedFrom) }
        let total = try connection.fetchInt("SELECT COUNT(*) FROM \(state.table.collectionTable(index)) WHERE owner = ?", [.integer(state.row)]) ?? 0
        guard to < count - 1 else { return (storedFrom, total - 1) }
        // The element at `to` once `from` is taken out, and its position in that shorter list.
        guard let next = try storedPosition(state, index, at: to < from ? to : to + 1) else { return nil }
        return (storedFrom, next > storedFrom ? next - 1 : next)
    }

    func listMove(_ state: ManagedObjectState, _ index: Int, from visibleFrom: Int, to visibleTo: Int) {
        collectionEdit(state, index) { table, transaction, id, path in
            guard let (storedFrom, storedTo) = try storedMove(state, index, from: visibleFrom, to: visibleTo) else {
                throw Error(.invalidValue, "Cannot move from \(visibleFrom) to \(visibleTo): the list has \(collectionCount(state, index)) elements.")
            }
            try moveListSlot(table, state.row, from: Int(storedFrom), to: Int(storedTo))
            if storedFrom != storedTo { transaction.record(.listMove(id, path: path, from: Int(storedFrom), to: Int(storedTo))) }
        }
    }

    /// Moves the slot at stored position `from` to `to`, as `Array.insert(remove(at: from), at: to)`.
    func moveListSlot(_ table: String, _ owner: Int64, from: Int, to: Int) throws {
        guard from != to else { return }
        try connection.execute("UPDATE \(table) SET pos = -1 WHERE owner = ? AND pos = ?", [.integer(owner), .integer(Int64(from))])
        if from < to {
            try connection.execute("UPDATE \(table) SET pos = -(pos - 1) - 2 WHERE owner = ? AND pos > ? AND pos <= ?", [.integer(owner), .integer(Int64(from)), .integer(Int64(to))])
        } else {
            try connection.execute("UPDATE \(table) SET pos = -(pos + 1) - 2 WHERE owner = ? AND pos >= ? AND pos < ?", [.integer(owner), .integer(Int64(to)), .integer(Int64(from))])
        }
        try connection.execute("UPDATE \(table) SET pos = -pos - 2 WHERE owner = ? AND pos < -1", [.integer(owner)])
        try connection.execute("UPDATE \(table) SET pos = ? WHERE owner = ? AND pos = -1", [.integer(Int64(to)), .integer(owner)])
    }

    func collectionClear(_ state: ManagedObjectState, _ index: Int) {
        collectionEdit(state, index) { table, transaction, id, path in
            try clearCollection(state, index, transaction)
            transaction.record(.clear(id, path: path))
        }
    }

    private func clearCollection(_ state: ManagedObjectState, _ index: Int, _ transaction: WriteTransaction) throws {
        let table = state.table.collectionTable(index)
        if isEmbedded(state.table.property(index)) {
            for row in try connection.fetchAll("SELECT value FROM \(table) WHERE owner = ?", [.integer(state.row)]) {
                try deleteEmbeddedElement(state, index, row[0], transaction)
            }
        }
        try connection.execute("DELETE FROM \(table) WHERE owner = ?", [.integer(state.row)])
    }

    private func deleteEmbeddedElement(_ state: ManagedObjectState, _ index: Int, _ raw: SQLValue, _ transaction: WriteTransaction) throws {
        guard isEmbedded(state.table.property(index)), case .integer(let row) = raw,
              let target = coordinator.table(named: state.table.property(index).objectType ?? "") else { return }
        try deleteRow(target, row, transaction)
    }

    // MARK: Set

    func setInsert(_ state: ManagedObjectState, _ index: Int, _ element: StoredElement) {
        collectionEdit(state, index) { table, transaction, id, path in
            let value = try sqlElement(element, state, index, transaction)
            let exists = try connection.fetchOne("SELECT 1 FROM \(table) WHERE owner = ? AND value IS ?", [.integer(state.row), value]) != nil
            guard !exists else { return }
            try connection.execute("INSERT INTO \(table) (owner, value) VALUES (?, ?)", [.integer(state.row), value])
            transaction.record(.setInsert(id, path: path, value: try instructionValue(state.table.property(index), value)))
        }
    }

    func setRemove(_ state: ManagedObjectState, _ index: Int, _ element: StoredElement) {
        collectionEdit(state, index) { table, transaction, id, path in
            let value: SQLValue
            switch element {
            case .value(let v): value = v.sqlValue
            case .object(let o):
                guard let row = o._managedState?.row else { return }
                value = .integer(row)
            }
            guard try connection.fetchOne("SELECT 1 FROM \(table) WHERE owner = ? AND value IS ?", [.integer(state.row), value]) != nil else { return }
            transaction.record(.setErase(id, path: path, value: try instructionValue(state.table.property(index), value)))
            try connection.execute("DELETE FROM \(table) WHERE owner = ? AND value IS ?", [.integer(state.row), value])
        }
    }

    func setContains(_ state: ManagedObjectState, _ index: Int, _ element: StoredElement) -> Bool {
        verifyThread()
        let value: SQLValue
        switch element {
        case .value(let v): value = v.sqlValue
        case .object(let o):
            guard let row = o._managedState?.row else { return false }
            value = .integer(row)
        }
        return (try? connection.fetchOne("SELECT 1 FROM \(state.table.collectionTable(index)) WHERE owner = ? AND value IS ?", [.integer(state.row), value])) ?? nil != nil
    }

    // MARK: Map

    func mapSet(_ state: ManagedObjectState, _ index: Int, key: String, _ element: StoredElement) {
        collectionEdit(state, index) { table, transaction, id, path in
            if let old = try connection.fetchOne("SELECT value FROM \(table) WHERE owner = ? AND key = ?", [.integer(state.row), .text(key)]) {
                try deleteEmbeddedElement(state, index, old[0], transaction)
            }
            let value = try sqlElement(element, state, index, transaction)
            try connection.execute("INSERT OR REPLACE INTO \(table) (owner, key, value) VALUES (?, ?, ?)", [.integer(state.row), .text(key), value])
            transaction.record(.set(id, path: path + [.key(key)], value: try instructionValue(state.table.property(index), value)))
        }
    }

    func mapRemove(_ state: ManagedObjectState, _ index: Int, key: String) {
        collectionEdit(state, index) { table, transaction, id, path in
            guard let old = try connection.fetchOne("SELECT value FROM \(table) WHERE owner = ? AND key = ?", [.integer(state.row), .text(key)]) else { return }
            try deleteEmbeddedElement(state, index, old[0], transaction)
            try connection.execute("DELETE FROM \(table) WHERE owner = ? AND key = ?", [.integer(state.row), .text(key)])
            transaction.record(.mapErase(id, path: path, key: key))
        }
    }

    func mapValue(_ state: ManagedObjectState, _ index: Int, key: String) -> StoredElement? {
        verifyThread()
        guard let row = try? connection.fetchOne("SELECT value FROM \(state.table.collectionTable(index)) WHERE owner = ? AND key = ?", [.integer(state.row), .text(key)]) else { return nil }
        return element(row[0], state.table.property(index))
    }

    // MARK: Whole collections

    /// Replaces a collection's contents with unmanaged contents (adding an object, or assigning a
    /// collection property).
    func replaceCollection(_ state: ManagedObjectState, _ index: Int, _ content: FieldContent, _ transaction: WriteTransaction) throws {
        let (id, basePath) = try address(state.table, state.row)
        let path = basePath + [.property(state.table.property(index).name)]
        let table = state.table.collectionTable(index)
        let existing = try connection.fetchInt("SELECT COUNT(*) FROM \(table) WHERE owner = ?", [.integer(state.row)]) ?? 0
        if existing > 0 {
            try clearCollection(state, index, transaction)
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
                    try connection.execute("INSERT INTO \(table) (owner, value) VALUES (?, ?)", [.integer(state.row), value])
                    transaction.record(.setInsert(id, path: path, value: try instructionValue(property, value)))
                } else {
                    try connection.execute("INSERT INTO \(table) (owner, pos, value) VALUES (?, ?, ?)", [.integer(state.row), .integer(Int64(position)), value])
                    transaction.record(.listInsert(id, path: path, index: position, value: try instructionValue(property, value)))
                }
            }
        case .entries(let entries):
            for (key, element) in entries {
                let value = try sqlElement(element, state, index, transaction)
                try connection.execute("INSERT OR REPLACE INTO \(table) (owner, key, value) VALUES (?, ?, ?)", [.integer(state.row), .text(key), value])
                transaction.record(.set(id, path: path + [.key(key)], value: try instructionValue(property, value)))
            }
        default: break
        }
        if existing > 0 || content.isNonEmpty { transaction.summary.modify(state.table.name, state.row, property.name) }
        bumpStamp()
    }
}

extension FieldContent {
    var isNonEmpty: Bool {
        switch self {
        case .elements(let e): !e.isEmpty
        case .entries(let e): !e.isEmpty
        default: false
        }
    }
}
