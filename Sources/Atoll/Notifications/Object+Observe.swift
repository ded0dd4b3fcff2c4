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
        state.realm.verifyThread()
        let token = NotificationToken {}
        let notifier = ObjectNotifier(object: self as! T, keyPaths: keyPaths, block: block, token: token)
        state.realm.notifiers.add(notifier)
        return token
    }

    /// The object's changes as an asynchronous sequence (`.deleted` ends it).
    public var changes: AsyncStream<ObjectChange<ObjectBase>> {
        AsyncStream { continuation in
            let token = observe { (change: ObjectChange<ObjectBase>) in
                continuation.yield(change)
                if case .deleted = change { continuation.finish() }
            }
            let box = UncheckedToken(token: token)
            continuation.onTermination = { _ in box.token.invalidate() }
        }
    }
}

extension ObjectChange: @unchecked Sendable {}

final class ObjectNotifier<T: ObjectBase>: Notifier {
    let object: T
    let keyPaths: Set<String>?
    let block: (ObjectChange<T>) -> Void
    private var values: [String: Any?] = [:]

    init(object: T, keyPaths: [String]?, block: @escaping (ObjectChange<T>) -> Void, token: NotificationToken) {
        self.object = object
        self.keyPaths = keyPaths.map { Set($0.map { String($0.split(separator: ".").first ?? "") }) }
        self.block = block
        super.init(token: token)
        values = snapshot()
    }

    private func snapshot() -> [String: Any?] {
        guard let state = object._managedState, !state.isInvalidated else { return [:] }
        var result: [String: Any?] = [:]
        for index in state.table.columns where state.table.property(index).type != .object {
            result[state.table.property(index).name] = object.value(forKey: state.table.property(index).name)
        }
        return result
    }

    override func resync(in realm: Realm) { values = snapshot() }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
        guard let state = object._managedState else { return }
        let changes = summary.changes(for: state.table.name)
        if changes?.deleted.contains(state.row) == true || (summary.isWholesale && state.isInvalidated) {
            token.invalidate()
            block(.deleted)
            return
        }
        guard let changed = changes?.modified[state.row] else { return }
        let names = state.table.schema.properties.map(\.name).filter { changed.contains($0) && (keyPaths?.contains($0) ?? true) }
        guard !names.isEmpty else { return }
        let old = values
        values = snapshot()
        block(.change(object, names.map { name in
            let isScalar = old.keys.contains(name)
            return PropertyChange(name: name, oldValue: isScalar ? old[name] ?? nil : nil,
                                  newValue: isScalar ? values[name] ?? nil : object.value(forKey: name))
        }))
    }
}
