import AtollCore
import Foundation

extension ObjectBase {
    /// Calls `block` when the object's properties change or it is deleted.
    ///
    /// ```swift
    /// let token = dog.observe { change in
    ///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
    /// }
    /// ```
    public func observe<T: ObjectBase>(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                                       _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        guard let state = _managedState else {
            preconditionFailure("Only managed objects can be observed; add the object to a realm first")
        }
        return state.realm.addNotifier(on: queue, block, frozen: { $0.frozen() }) {
            ObjectNotifier(object: self as! T, keyPaths: keyPaths, block: $0)
        }
    }

    /// The object's changes as an asynchronous sequence; `.deleted` ends it.
    ///
    /// ```swift
    /// for await change in dog.changes {
    ///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
    /// }
    /// ```
    public var changes: NotificationSequence<ObjectChange<ObjectBase>> {
        NotificationSequence { continuation in
            self.observe { (change: ObjectChange<ObjectBase>) in
                continuation.yield(change)
                if case .deleted = change { continuation.finish() }
            }
        }
    }
}

extension ObjectChange: @unchecked Sendable {}

extension ObjectChange {
    func frozen() -> ObjectChange<T> {
        guard case .change(let object, let properties) = self, let object = object as? ObjectBase else { return self }
        return .change(object.freeze() as! T, properties)
    }
}

final class ObjectNotifier<T: ObjectBase>: Notifier {
    /// The observed accessor, while someone holds it; otherwise a new one is made for a delivery.
    private weak var object: T?
    private let table: TableInfo
    private let row: Int64
    let keyPaths: Set<String>?
    /// Key paths that go through a to-one link: (link property, property of the linked object).
    private let linkedKeyPaths: [(link: String, property: String)]
    let block: (ObjectChange<T>) -> Void
    private var values: [String: Any?] = [:]

    init(object: T, keyPaths: [String]?, block: @escaping (ObjectChange<T>) -> Void) {
        let state = object._managedState!
        self.object = object
        table = state.table
        row = state.row
        // Key paths name properties as the app does; changes are tracked by stored names.
        let info = ClassInfo.of(Swift.type(of: object))
        let keyPaths = keyPaths?.map { info.persistedKeyPath($0) }
        self.keyPaths = keyPaths.map { Set($0.map { String($0.split(separator: ".").first ?? "") }) }
        linkedKeyPaths = (keyPaths ?? []).compactMap { path in
            let parts = path.split(separator: ".").map(String.init)
            return parts.count > 1 ? (parts[0], parts[1]) : nil
        }
        self.block = block
        super.init()
        values = snapshot(of: object)
    }

    private func accessor(in realm: Realm) -> T {
        if let object { return object }
        let made = realm.materialize(table, row: row, as: T.self)!
        object = made
        return made
    }

    private func snapshot(of object: T) -> [String: Any?] {
        guard let state = object._managedState, !state.isInvalidated else { return [:] }
        var result: [String: Any?] = [:]
        let info = ClassInfo.of(Swift.type(of: object))
        for index in table.columns where table.property(index).type != .object {
            result[table.property(index).name] = object is DynamicObject ? DynamicObject.read(state, index) : info.value(at: index, of: object)
        }
        return result
    }

    override func resync(in realm: Realm) { values = snapshot(of: accessor(in: realm)) }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
        let changes = summary.changes(for: table.name)
        let object = accessor(in: realm)
        if changes?.deleted.contains(row) == true || (summary.isWholesale && object.isInvalidated) {
            cancel()
            token?.invalidate()
            block(.deleted)
            return
        }
        var changed = changes?.modified[row] ?? []
        // "owner.name": a change of the linked object's `name` is a change of `owner`.
        for (link, property) in linkedKeyPaths where !changed.contains(link) {
            guard let index = table.schema.properties.firstIndex(where: { $0.name == link }),
                  table.property(index).isLink, let target = table.property(index).objectType,
                  let targetChanges = summary.changes(for: target)?.modified,
                  let state = object._managedState, let position = table.columnPosition[index],
                  case .integer(let targetRow)? = state.values()?[position],
                  targetChanges[targetRow]?.contains(property) == true else { continue }
            changed.insert(link)
        }
        guard !changed.isEmpty else { return }
        let names = table.schema.properties.map(\.name).filter { changed.contains($0) && (keyPaths?.contains($0) ?? true) }
        guard !names.isEmpty else { return }
        let old = values
        values = snapshot(of: object)
        let info = ClassInfo.of(Swift.type(of: object))
        block(.change(object, names.map { name in
            let isScalar = old.keys.contains(name)
            let index = info.persistedIndex[name]
            return PropertyChange(name: index.map { info.publicNames[$0] } ?? name, oldValue: isScalar ? old[name] ?? nil : nil,
                                  newValue: isScalar ? values[name] ?? nil : index.flatMap { info.value(at: $0, of: object) })
        }))
    }
}
