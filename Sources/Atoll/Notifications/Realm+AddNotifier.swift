import Foundation

extension Realm {
    /// Registers the notifier `make` builds around a delivery block, lets it deliver its initial
    /// state, and returns the token that keeps it. The delivery block is `block`, or with a
    /// `queue`, one that freezes each change and calls `block` on that queue: what every
    /// `observe(keyPaths:on:_:)` does.
    ///
    /// ```swift
    /// realm.addNotifier(on: queue, block, frozen: { $0.frozen() }) {
    ///     ResultsNotifier(results: self, keyPaths: keyPaths, block: $0)
    /// }
    /// ```
    func addNotifier<Change>(on queue: DispatchQueue?, _ block: @escaping (Change) -> Void,
                             frozen: @escaping (Change) -> Change,
                             _ make: (@escaping (Change) -> Void) -> Notifier) -> NotificationToken {
        verifyThread()
        let deliver: (Change) -> Void
        if let queue {
            let box = UncheckedBlock(block: block)
            deliver = { change in
                let frozen = UncheckedChange(change: frozen(change))
                queue.async { box.block(frozen.change) }
            }
        } else {
            deliver = block
        }
        let notifier = make(deliver)
        let token = notifiers.register(notifier, in: self)
        notifier.deliverInitial(in: self)
        return token
    }
}

struct UncheckedBlock<T>: @unchecked Sendable { let block: (T) -> Void }
struct UncheckedChange<T>: @unchecked Sendable { let change: T }
