import Foundation

/// An asynchronous sequence of notifications (`results.changesets`, `object.changes`).
///
/// Making an iterator registers the observer on the realm's thread or actor; releasing the
/// iterator, or cancelling the task that awaits it, unregisters it.
///
/// ```swift
/// for await change in dog.changes {
///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
/// }
/// ```
public struct NotificationSequence<Element>: AsyncSequence {
    let register: (AsyncStream<Element>.Continuation) -> NotificationToken

    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let registration = Registration(token: register(continuation))
        continuation.onTermination = { [weak registration] _ in registration?.token.invalidate() }
        return Iterator(base: stream.makeAsyncIterator(), registration: registration)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator
        let registration: Registration

        public mutating func next() async -> Element? {
            await base.next()
        }

        /// The isolated variant (the standard library's, from macOS 15 / iOS 18): `for await` inside an
        /// actor uses it, so the iterator stays in the actor's region; older systems call `next()`.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await base.next(isolation: actor)
        }
    }

    /// Unregisters the observer when the last copy of the iterator goes.
    final class Registration: @unchecked Sendable {
        let token: NotificationToken
        init(token: NotificationToken) { self.token = token }
        deinit { token.invalidate() }
    }
}
