import Foundation

/// Collects values from `@Sendable` callbacks (notification blocks, error handlers, other threads).
///
/// ```swift
/// let errors = Recorder<any Error>()
/// app.syncManager.errorHandler = { error, _ in errors.append(error) }
/// #expect(await waitUntil { !errors.all.isEmpty })
/// ```
package final class Recorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    package init() {}

    package func append(_ value: Value) { lock.withLock { values.append(value) } }

    /// Everything appended so far, in order.
    package var all: [Value] { lock.withLock { values } }
}

/// Polls `condition` until it holds or `timeout` passes, suspending in between so the caller's
/// actor can run scheduled work (a realm's refresh). Returns whether the condition held. The
/// bounded poll a test uses instead of a fixed sleep.
package func waitUntil(timeout: Duration = .seconds(10), isolation: isolated (any Actor)? = #isolation,
                      _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
