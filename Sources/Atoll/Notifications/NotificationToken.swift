import AtollCore
import Foundation

/// Keeps a notification block registered; `invalidate()` (or releasing the last reference of the
/// realm) stops it.
public final class NotificationToken: @unchecked Sendable, Hashable {
    private let lock = NSLock()
    private var onInvalidate: (() -> Void)?

    init(onInvalidate: @escaping () -> Void) { self.onInvalidate = onInvalidate }

    /// Stops notifications. Safe to call more than once, from any thread.
    public func invalidate() {
        let action = lock.withLock { () -> (() -> Void)? in
            defer { onInvalidate = nil }
            return onInvalidate
        }
        action?()
    }

    var isValid: Bool { lock.withLock { onInvalidate != nil } }

    public static func == (a: NotificationToken, b: NotificationToken) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A change of a collection between two notifications.
public enum RealmCollectionChange<CollectionType> {
    /// The first result, delivered once after registration.
    case initial(CollectionType)
    /// What changed: deletions are indices in the previous version; insertions and modifications
    /// are indices in the new version.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    case error(Swift.Error)
}

/// One changed property of an object.
public struct PropertyChange {
    public let name: String
    /// The value before the change (when known).
    public let oldValue: Any?
    public let newValue: Any?
}

/// A change of one object.
public enum ObjectChange<T> {
    case change(T, [PropertyChange])
    case deleted
    case error(Swift.Error)
}

/// One registered notification block of a realm.
class Notifier {
    let token: NotificationToken
    /// Skips the next delivery (`withoutNotifying:`).
    var skipNext = false

    init(token: NotificationToken) { self.token = token }

    /// Called on the realm's thread after it advanced; `summary` says what changed.
    func deliver(_ summary: ChangeSummary, in realm: Realm) {}

    /// Called once, right after registration, for the initial state.
    func deliverInitial(in realm: Realm) {}

    /// Takes the current state as the baseline without calling the block.
    func resync(in realm: Realm) {}
}

/// The notifiers of one realm.
struct NotifierList {
    private(set) var notifiers: [Notifier] = []

    mutating func add(_ notifier: Notifier) {
        notifiers.removeAll { !$0.token.isValid }
        notifiers.append(notifier)
    }

    func skip(_ tokens: [NotificationToken]) {
        for notifier in notifiers where tokens.contains(notifier.token) { notifier.skipNext = true }
    }

    func deliver(_ summary: ChangeSummary, in realm: Realm) {
        for notifier in notifiers where notifier.token.isValid {
            if notifier.skipNext {
                notifier.skipNext = false
                notifier.resync(in: realm)
                continue
            }
            notifier.deliver(summary, in: realm)
        }
    }
}
