#if !canImport(ObjectiveC)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

// On Apple platforms `publisher(for:)` is Foundation's, of the key-value observable session
// (SyncSession+State.swift). Elsewhere this is the same shape over Atoll's own observation.

private struct UncheckedSendable<T>: @unchecked Sendable { let value: T }

extension SyncSession {
    /// A publisher of the value at `keyPath` (`\.state`, `\.connectionState`), as Foundation's
    /// `publisher(for:options:)`: with `.initial` (the default) it starts with the value now.
    ///
    /// ```swift
    /// let cancellable = session.publisher(for: \.connectionState).sink { print($0) }
    /// ```
    public func publisher<Value: Equatable>(for keyPath: KeyPath<SyncSession, Value>,
                                            options: KeyValueObservingOptions = [.initial, .new]) -> AnyPublisher<Value, Never> {
        let subject = CurrentValueSubject<Value, Never>(self[keyPath: keyPath])
        // Sent to from the session's threads, as a key-value observing publisher is.
        let sending = UncheckedSendable(value: subject)
        let observation = observe(keyPath, options: [.new]) { _, change in
            if let value = change.newValue { sending.value.send(value) }
        }
        // The observation lasts as long as the publisher.
        return subject
            .handleEvents(receiveCancel: { _ = observation })
            .dropFirst(options.contains(.initial) ? 0 : 1)
            .eraseToAnyPublisher()
    }
}
#endif
