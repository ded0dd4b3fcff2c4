import Foundation

// Key-value observation of a session's `state` and `connectionState`, as realm-swift apps write
// it (`session.observe(\.connectionState, options: [.initial]) { session, change in … }`).
// On Apple platforms that is Foundation's own: the session is an `NSObject` with `@objc dynamic`
// state (SyncSession.swift), so `observe` returns `NSKeyValueObservation` and
// `publisher(for:)` is Foundation's. Elsewhere Foundation has no key-value observing: the session
// reports its own changes, and the Foundation names (`NSKeyValueObservation`,
// `NSKeyValueObservingOptions`, …) are the types below, so an app's
// `var token: NSKeyValueObservation?` compiles unchanged.

#if !canImport(ObjectiveC)
/// When an observation calls its handler and what the change carries (Foundation's
/// `NSKeyValueObservingOptions`).
public struct KeyValueObservingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The change carries the new value.
    public static let new = KeyValueObservingOptions(rawValue: 1 << 0)
    /// The change carries the old value.
    public static let old = KeyValueObservingOptions(rawValue: 1 << 1)
    /// The handler is called at once, with the current value.
    public static let initial = KeyValueObservingOptions(rawValue: 1 << 2)
    /// The handler is called before each change too (`isPrior`), then after it.
    public static let prior = KeyValueObservingOptions(rawValue: 1 << 3)
}

/// The kind of a change (Foundation's `NSKeyValueChange`); a session's values are only set.
public enum KeyValueChange: UInt, Sendable, Hashable {
    case setting = 1, insertion, removal, replacement
}

/// One change an observation reports (Foundation's `NSKeyValueObservedChange`).
public struct KeyValueObservedChange<Value> {
    public typealias Kind = KeyValueChange
    public let kind: Kind
    /// The value after the change, with `.new` in the options.
    public let newValue: Value?
    /// The value before the change, with `.old` in the options (never for the initial call).
    public let oldValue: Value?
    /// Always `nil`: no value of a session is a collection.
    public let indexes: IndexSet?
    /// Whether this is the call before the change (`.prior`).
    public let isPrior: Bool
}

extension KeyValueObservedChange: Sendable where Value: Sendable {}

/// An observation made by `observe(_:options:changeHandler:)`: keep it to keep observing;
/// `invalidate()` or releasing it ends it (Foundation's `NSKeyValueObservation`).
public final class KeyValueObservation: @unchecked Sendable, Hashable {
    private let lock = NSLock()
    private var onInvalidate: (() -> Void)?

    init(onInvalidate: @escaping () -> Void) { self.onInvalidate = onInvalidate }

    deinit { invalidate() }

    /// Stops the observation. Safe to call more than once, from any thread.
    public func invalidate() {
        let action = lock.withLock { () -> (() -> Void)? in
            defer { onInvalidate = nil }
            return onInvalidate
        }
        action?()
    }

    public static func == (lhs: KeyValueObservation, rhs: KeyValueObservation) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Foundation's names, which Linux's Foundation lacks.
public typealias NSKeyValueObservingOptions = KeyValueObservingOptions
public typealias NSKeyValueObservedChange<Value> = KeyValueObservedChange<Value>
public typealias NSKeyValueObservation = KeyValueObservation
public typealias NSKeyValueChange = KeyValueChange

/// A change handler, called on any thread (as realm-swift's are).
private struct ChangeHandler<Value>: @unchecked Sendable {
    let call: @Sendable (SyncSession, KeyValueObservedChange<Value>) -> Void
}

extension SyncSession {
    /// Calls `changeHandler` whenever the value at `keyPath` (`\.state`, `\.connectionState`)
    /// changes, on an arbitrary thread (so it is `@Sendable`); keep the observation to keep observing.
    ///
    /// ```swift
    /// let observation = session.observe(\.connectionState, options: [.initial]) { session, change in
    ///     print(session.connectionState)
    /// }
    /// ```
    public func observe<Value: Equatable>(
        _ keyPath: KeyPath<SyncSession, Value>, options: KeyValueObservingOptions = [],
        changeHandler: @escaping @Sendable (SyncSession, KeyValueObservedChange<Value>) -> Void
    ) -> KeyValueObservation {
        observe(keyPath, options: options, changed: !=, changeHandler: changeHandler)
    }

    /// `observe(_:options:changeHandler:)` for a value that is not `Equatable`: the handler hears
    /// every change of the session's state or connection state.
    @_disfavoredOverload
    public func observe<Value>(
        _ keyPath: KeyPath<SyncSession, Value>, options: KeyValueObservingOptions = [],
        changeHandler: @escaping @Sendable (SyncSession, KeyValueObservedChange<Value>) -> Void
    ) -> KeyValueObservation {
        observe(keyPath, options: options, changed: { _, _ in true }, changeHandler: changeHandler)
    }

    private func observe<Value>(
        _ keyPath: KeyPath<SyncSession, Value>, options: KeyValueObservingOptions, changed: @escaping (Value, Value) -> Bool,
        changeHandler: @escaping @Sendable (SyncSession, KeyValueObservedChange<Value>) -> Void
    ) -> KeyValueObservation {
        let handler = ChangeHandler(call: changeHandler)
        let read = Reader(keyPath: keyPath, changed: changed)
        // Registered before the initial call, so that no change in between goes unheard.
        let id = addObserver { [weak self] old, new in
            guard let self else { return }
            let (before, after) = (read.value(self, old), read.value(self, new))
            guard read.changed(before, after) else { return }
            if options.contains(.prior) {
                handler.call(self, KeyValueObservedChange(kind: .setting, newValue: nil, oldValue: options.contains(.old) ? before : nil,
                                                          indexes: nil, isPrior: true))
            }
            handler.call(self, KeyValueObservedChange(kind: .setting, newValue: options.contains(.new) ? after : nil,
                                                      oldValue: options.contains(.old) ? before : nil, indexes: nil, isPrior: false))
        }
        if options.contains(.initial) {
            let now = read.value(self, snapshot)
            handler.call(self, KeyValueObservedChange(kind: .setting, newValue: options.contains(.new) ? now : nil,
                                                      oldValue: nil, indexes: nil, isPrior: false))
        }
        return KeyValueObservation { [weak self] in self?.removeObserver(id) }
    }

    /// Reads an observed key path at a snapshot: `\.state` and `\.connectionState` from the
    /// snapshot (the value of that change, not a later one), anything else from the session.
    private struct Reader<Value>: @unchecked Sendable {
        let keyPath: KeyPath<SyncSession, Value>
        let changed: (Value, Value) -> Bool

        func value(_ session: SyncSession, _ snapshot: Snapshot) -> Value {
            if keyPath as AnyKeyPath == \SyncSession.state as AnyKeyPath, let value = snapshot.state as? Value { return value }
            if keyPath as AnyKeyPath == \SyncSession.connectionState as AnyKeyPath, let value = snapshot.connectionState as? Value { return value }
            return session[keyPath: keyPath]
        }
    }

}
#endif

extension SyncSession {
    /// The sync configuration of the session's realm; `nil` once the session is invalid.
    public func configuration() -> SyncConfiguration? {
        state == .invalid ? nil : engine.sync
    }

    /// Calls `block` on `queue` (a global queue when `nil`) once every local change up to now
    /// is uploaded, or every server change downloaded, with the error if the wait failed.
    ///
    /// ```swift
    /// session.wait(for: .upload, queue: .main) { error in print(error ?? "uploaded") }
    /// ```
    @preconcurrency
    public func wait(for direction: ProgressDirection, queue: DispatchQueue? = nil, block: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            let failure: Swift.Error?
            do {
                try await wait(for: direction)
                failure = nil
            } catch {
                failure = error
            }
            (queue ?? .global()).async { block(failure) }
        }
    }
}

extension User {
    /// The session of the user's open realm of `partitionValue`, if there is one.
    ///
    /// ```swift
    /// let session = user.session(forPartitionValue: "shire")
    /// ```
    public func session<T: PartitionValueConvertible>(forPartitionValue partitionValue: T) -> SyncSession? {
        let partition = partitionValue._partitionValue
        return allSessions.first { $0.engine.sync.partition == partition }
    }
}
