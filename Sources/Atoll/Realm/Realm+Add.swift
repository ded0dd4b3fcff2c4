import AtollCore
import Foundation

extension Realm {
    /// Adds an unmanaged object (and the unmanaged objects it links to) to the realm. The object
    /// becomes managed: later reads and writes go to the realm.
    ///
    /// With `update: .modified` or `.all`, an existing object with the same primary key is updated
    /// instead; with `.error` (the default) that is an error, reported when the write commits.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        guard let transaction = requireWrite("add objects") else { return }
        let outer = transaction.linkedAddPolicy
        transaction.linkedAddPolicy = update
        defer { transaction.linkedAddPolicy = outer }
        perform(transaction) { _ = try addObject(object, update: update, transaction) }
    }

    /// Adds every object of a sequence.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Creates an object from a dictionary, an array or another object, or with `update` other than
    /// `.error` updates the existing object with the same primary key (only the given properties).
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        guard let transaction = requireWrite("create objects") else { return T() }
        let outer = transaction.linkedAddPolicy
        transaction.linkedAddPolicy = update
        defer { transaction.linkedAddPolicy = outer }
        if update != .error, let table = try? self.table(for: type, create: true), let pk = table.primaryKeyIndex {
            // Values are keyed by the names the app uses (see `ObjectBase.propertiesMapping()`).
            let info = ClassInfo.of(type)
            let name = info.publicNames[pk]
            let given: Any? = (value as? [String: Any])?[name] ?? (value as? [Any]).flatMap { pk < $0.count ? $0[pk] : nil }
                ?? (value as? ObjectBase)?.value(forKey: name)
            if let given, let key = Value(any: given).flatMap({ coerce($0, to: table.property(pk)) }),
               let row = try? rowForPrimaryKey(table, key), let existing = materialize(table, row: row) as? T {
                perform(transaction) {
                    let values: [(String, Any)]
                    switch value {
                    case let dictionary as [String: Any]: values = dictionary.filter { info.propertyIndex[$0.key] != nil }
                    case let array as [Any]: values = array.enumerated().map { (info.publicNames[$0.offset], $0.element) }
                    case let object as ObjectBase: values = info.publicNames.compactMap { p in object.value(forKey: p).map { (p, $0) } }
                    default: throw Error(.invalidValue, "cannot create '\(table.name)' from a \(Swift.type(of: value))")
                    }
                    for (key, element) in values where key != name {
                        if update == .modified, let current = existing.value(forKey: key), Self.same(current, element) { continue }
                        try ClassInfo.of(type).setValue(element, forKey: key, of: existing)
                    }
                }
                return existing
            }
        }
        let object = T()
        do {
            try ClassInfo.of(type).assign(value, to: object)
        } catch let error as Error {
            transaction.fail(error)
            return object
        } catch {
            transaction.fail(Error(.invalidValue, "\(error)"))
            return object
        }
        add(object, update: update)
        return object
    }

    static func same(_ a: Any, _ b: Any) -> Bool {
        guard let x = Value(any: a), let y = Value(any: b) else { return false }
        return x == y
    }

    // MARK: Inserting

    /// Adds `object` if unmanaged and returns its row.
    @discardableResult
    func addObject(_ object: ObjectBase, update: UpdatePolicy, _ transaction: WriteTransaction,
                   parent: (TableInfo, Int64, Int)? = nil) throws -> Int64 {
        if let state = object._managedState {
            guard state.realm === self else {
                throw Error(.wrongRealm, "Object of type '\(state.table.name)' is already managed by another Realm; use create(_:value:update:) to copy it")
            }
            if state.table.schema.isEmbedded && parent != nil {
                throw Error(.invalidValue, "Cannot set a managed embedded object of type '\(state.table.name)' as the child of another object")
            }
            return state.row
        }
        if let dynamic = object as? DynamicObject { return try row(of: dynamic) }
        let type = Swift.type(of: object)
        guard let table = try self.table(for: type, create: true), let info = table.classInfo else {
            throw Error(.schemaMismatch, "Object type '\(type.className())' is not in this Realm's schema")
        }
        if table.schema.isEmbedded && parent == nil {
            throw Error(.invalidValue, "Cannot add an embedded object of type '\(table.name)' on its own: assign it to a property of its parent")
        }
        // An embedded object's steps are carried by the instruction that sets it whole; a
        // top-level object it links to records its own.
        let wasMuted = transaction.muted
        transaction.muted = table.schema.isEmbedded
        defer { transaction.muted = wasMuted }
        let contents = info.contents(of: object)
        var primaryKey: Value?
        if let pk = table.primaryKeyIndex, case .scalar(let key) = contents[pk] {
            primaryKey = key
            // With `.error` the unique index on the key finds duplicates; no lookup needed.
            if update != .error, let existing = try rowForPrimaryKey(table, key) {
                let state = bind(object, info, table, existing)
                try write(contents, to: state, update: update, transaction)
                return existing
            }
        }
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(table.columns.count + 3)
        for index in table.columns {
            if case .scalar(let value) = contents[index], table.property(index).type != .object {
                try validate(value, for: table, index)
                arguments.append(value.sqlValue(as: table.property(index).type))
            } else {
                arguments.append(.null)
            }
        }
        if let (parentTable, parentRow, parentProperty) = parent {
            arguments += [.text(parentTable.name), .integer(parentRow), .text(parentTable.property(parentProperty).name)]
        }
        let row: Int64
        do {
            row = try store.insertRow(table, arguments)
        } catch where primaryKey != nil && ObjectStore.isDuplicateKey(error) {
            throw Error(.primaryKeyExists, "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(primaryKey!)'.",
                        underlying: error as? any Swift.Error & Sendable)
        }
        transaction.summary.insert(table.name, row)
        let state = bind(object, info, table, row)
        if !table.schema.isEmbedded {
            let id = ObjectID(type: table.name, primaryKey: primaryKey ?? .int(row))
            try resolveLinks(to: table, row, id: id, transaction)
            if transaction.isRecording {
                transaction.record(.createObject(id))
                for index in table.columns where index != table.primaryKeyIndex && table.property(index).type != .object {
                    if case .scalar(let value) = contents[index] {
                        transaction.record(.set(id, path: [.property(table.property(index).name)], value: value))
                    }
                }
            }
        }
        for (index, content) in contents.enumerated() {
            switch content {
            case .link(let target?): try setLink(state, index, target, transaction)
            case .elements, .entries: try replaceCollection(state, index, content, transaction)
            case .mixed(.value(.null)): break
            case .mixed(let element): try setMixed(state, index, element, transaction)
            default: break
            }
        }
        return row
    }

    /// Makes `object` the accessor of `row`. Its fields are bound on first access, as those of an
    /// accessor made for a stored row are (`Persisted.managedIndex`): once the object has a managed
    /// state, every read and write goes to the realm whatever its fields hold, and binding every
    /// field of every added object was a tenth of a bulk insert. A class whose fields are read
    /// without that access (`Encodable`) or keep samples is bound now.
    private func bind(_ object: ObjectBase, _ info: ClassInfo, _ table: TableInfo, _ row: Int64) -> _ManagedObjectState {
        if info.bindsEagerly { info.bind(object) }
        let state = _ManagedObjectState(realm: self, table: table, row: row)
        object._managedState = state
        return state
    }

    /// Writes unmanaged contents over an existing object (`add(_:update:)` with a known key).
    private func write(_ contents: [_FieldContent], to state: _ManagedObjectState, update: UpdatePolicy, _ transaction: WriteTransaction) throws {
        for (index, content) in contents.enumerated() where index != state.table.primaryKeyIndex {
            switch content {
            case .scalar(let value) where state.table.property(index).type != .object:
                if update == .modified, state.scalar(at: index) == value { continue }
                try setField(state, index, value, transaction)
            case .link(let target):
                if let target { try setLink(state, index, target, transaction) }
                else if update == .all || !(state.scalar(at: index).isNull) { try setField(state, index, .null, transaction) }
            case .scalar:
                try setField(state, index, .null, transaction)
            case .elements, .entries:
                try replaceCollection(state, index, content, transaction)
            case .mixed(let element):
                if update == .modified, let key = mixedKey(element), state.scalar(at: index) == key { continue }
                try setMixed(state, index, element, transaction)
            }
        }
    }

    func validate(_ value: Value, for table: TableInfo, _ index: Int) throws {
        let property = table.property(index)
        if property.type == .any {
            guard value.isMixedStorable else {
                throw Error(.invalidValue, "\(value.kindName) value \(value) cannot be stored in AnyRealmValue '\(table.name).\(property.name)'")
            }
            return
        }
        if case .null = value {
            guard property.isOptional else {
                throw Error(.invalidValue, "Property '\(table.name).\(property.name)' of type \(property.typeDescription) cannot be nil")
            }
            return
        }
        guard value.propertyType == property.type else {
            throw Error(.invalidValue, "\(value.kindName) value \(value) cannot be stored in '\(table.name).\(property.name)' of type \(property.typeDescription)")
        }
    }

    // MARK: Setting fields

    func setField(_ state: _ManagedObjectState, _ index: Int, _ value: Value, _ transaction: WriteTransaction) throws {
        let table = state.table
        let property = table.property(index)
        if property.type == .object {
            guard case .null = value else { throw Error(.invalidValue, "'\(table.name).\(property.name)' holds objects") }
            try clearLink(state, index, transaction)
            return
        }
        try validate(value, for: table, index)
        if property.isPrimaryKey {
            guard state.scalar(at: index) == value else {
                throw Error(.invalidValue, "Primary key can't be changed after an object is inserted ('\(table.name).\(property.name)').")
            }
            return
        }
        try store.setField(table, state.row, index, value.sqlValue(as: property.type))
        let (id, path) = try address(table, state.row)
        transaction.record(.set(id, path: path + [.property(property.name)], value: value))
        transaction.summary.modify(table.name, state.row, property.name)
        bumpStamp()
    }

    func setLink(_ state: _ManagedObjectState, _ index: Int, _ target: ObjectBase, _ transaction: WriteTransaction) throws {
        let table = state.table
        let property = table.property(index)
        guard property.type == .object, property.isSingle else {
            throw Error(.invalidValue, "'\(table.name).\(property.name)' does not hold an object")
        }
        let targetType = target._managedState?.table.name ?? (target as? DynamicObject)?.typeName ?? ClassInfo.of(Swift.type(of: target)).schema.name
        guard targetType == property.objectType else {
            throw Error(.invalidValue, "'\(table.name).\(property.name)' holds '\(property.objectType ?? "")' objects, not '\(targetType)'")
        }
        try clearLink(state, index, transaction, recording: false)
        let targetRow = try addObject(target, update: transaction.linkedAddPolicy, transaction,
                                      parent: isEmbedded(property) ? (table, state.row, index) : nil)
        try store.setField(table, state.row, index, .integer(targetRow))
        let (id, path) = try address(table, state.row)
        transaction.record(.set(id, path: path + [.property(property.name)], value: try instructionValue(property, .integer(targetRow))))
        transaction.summary.modify(table.name, state.row, property.name)
        bumpStamp()
    }

    /// Sets a link to nil, deleting the embedded object it held.
    private func clearLink(_ state: _ManagedObjectState, _ index: Int, _ transaction: WriteTransaction, recording: Bool = true) throws {
        let table = state.table
        let property = table.property(index)
        try store.forgetUnresolvedLink(table, state.row, property.name)
        guard case .integer(let current)? = try store.field(table, state.row, index) else {
            if recording {
                let (id, path) = try address(table, state.row)
                transaction.record(.set(id, path: path + [.property(property.name)], value: .null))
            }
            return
        }
        try deleteEmbedded(property, .integer(current), transaction)
        try store.setField(table, state.row, index, .null)
        if recording {
            let (id, path) = try address(table, state.row)
            transaction.record(.set(id, path: path + [.property(property.name)], value: .null))
        }
        transaction.summary.modify(table.name, state.row, property.name)
        bumpStamp()
    }

    func isEmbedded(_ property: Property) -> Bool {
        property.type == .object && coordinator.table(named: property.objectType ?? "")?.schema.isEmbedded == true
    }
}
