import Foundation

/// Callbacks to call when something changes (an app's users, a user's state or tokens): what
/// `app.objectWillChange` and `user.objectWillChange` are built on. Any thread may subscribe,
/// cancel or fire; callbacks run on the firing thread, outside the lock.
final class ChangeObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var callbacks: [Int: @Sendable () -> Void] = [:]

    /// Registers `callback`; the returned token's `invalidate()` removes it.
    func subscribe(_ callback: @escaping @Sendable () -> Void) -> NotificationToken {
        let id = lock.withLock { () -> Int in
            next += 1
            callbacks[next] = callback
            return next
        }
        return NotificationToken(realm: nil) { [weak self] in
            guard let self else { return }
            _ = lock.withLock { callbacks.removeValue(forKey: id) }
        }
    }

    func fire() {
        for callback in lock.withLock({ callbacks.sorted { $0.key < $1.key }.map(\.value) }) { callback() }
    }
}
