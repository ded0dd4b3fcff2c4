import AtollCore
import Atomics
import Foundation

/// Keeps a notification block registered. `invalidate()`, or releasing the last reference to the
/// token, stops it. While registered, the token keeps its realm open.
///
/// ```swift
/// let token = dogs.observe { change in … }
/// // later
/// token.invalidate()
/// ```
public final class NotificationToken: @unchecked Sendable, Hashable {
    private let lock = NSLock()
    private var onInvalidate: (() -> Void)?
    /// The realm the observation reads, kept open while the token is valid.
    private var realm: Realm?

    init(realm: Realm?, onInvalidate: @escaping () -> Void) {
        self.realm = realm
        self.onInvalidate = onInvalidate
    }

    deinit { invalidate() }

    /// Stops notifications. Safe to call more than once, from any thread.
    public func invalidate() {
        let (action, realm) = lock.withLock { () -> ((() -> Void)?, Realm?) in
            defer { onInvalidate = nil; self.realm = nil }
            return (onInvalidate, self.realm)
        }
        action?()
        // The realm is released here, outside the lock: a last release closes it.
        _ = realm
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

/// One registered notification block of a realm. The realm's list owns it; it refers back to
/// the realm only weakly, so an observed realm can still close once its tokens are gone.
class Notifier {
    private let valid = ManagedAtomic<Bool>(true)
    /// The token that controls this notifier (for `write(withoutNotifying:)`).
    weak var token: NotificationToken?
    /// Skips the next delivery (`withoutNotifying:`).
    var skipNext = false

    var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Stops deliveries; any thread.
    func cancel() { valid.store(false, ordering: .releasing) }

    /// Called on the realm's thread after it advanced; `summary` says what changed.
    func deliver(_ summary: ChangeSummary, in realm: Realm) {}

    /// Called once, right after registration, for the initial state.
    func deliverInitial(in realm: Realm) {}

    /// Takes the current state as the baseline without calling the block.
    func resync(in realm: Realm) {}
}

/// The notifiers of one realm. Registration and delivery happen on the realm's thread;
/// `NotificationToken.invalidate()` may remove a notifier from any thread.
final class NotifierList: @unchecked Sendable {
    private let lock = NSLock()
    private var notifiers: [Notifier] = []

    /// Registers `notifier` and returns the token that keeps it (and `realm`) alive.
    func register(_ notifier: Notifier, in realm: Realm) -> NotificationToken {
        let token = NotificationToken(realm: realm) { [weak self, weak notifier] in
            guard let notifier else { return }
            notifier.cancel()
            self?.remove(notifier)
        }
        notifier.token = token
        lock.withLock { notifiers.append(notifier) }
        return token
    }

    private func remove(_ notifier: Notifier) {
        lock.withLock { notifiers.removeAll { $0 === notifier } }
    }

    var isEmpty: Bool { lock.withLock { notifiers.isEmpty } }

    func skip(_ tokens: [NotificationToken]) {
        guard !tokens.isEmpty else { return }
        for notifier in lock.withLock({ notifiers }) where tokens.contains(where: { $0 === notifier.token }) {
            notifier.skipNext = true
        }
    }

    func deliver(_ summary: ChangeSummary, in realm: Realm) {
        // A copy: blocks may register or invalidate observers while they run.
        for notifier in lock.withLock({ notifiers }) where notifier.isValid {
            if notifier.skipNext {
                notifier.skipNext = false
                notifier.resync(in: realm)
                continue
            }
            notifier.deliver(summary, in: realm)
        }
    }
}
