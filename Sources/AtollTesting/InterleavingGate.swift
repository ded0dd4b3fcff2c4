import AtollCore
import AtollServer

/// Holds a test server's sync coordinator at one of its test points until the test lets it go:
/// the interleavings a scheduler seldom produces, made on purpose (``SyncInterleaving``).
///
/// ```swift
/// let gate = InterleavingGate()
/// let server = try await SyncTestServer.start(configuration: configuration, interleaving: gate)
/// let held = gate.holdNext(.afterEarlyRebase)
/// client.send(upload)
/// await held.reached()      // the upload is rebased and waits before its transaction
/// other.send(otherUpload)   // … lands first
/// held.release()
/// ```
package final class InterleavingGate: SyncInterleaving {
    package enum Point: Sendable, Hashable {
        /// Sync of an app is being terminated: its sessions ended, its histories not yet restarted.
        case whileTerminating
        /// An upload was rebased early and waits before its transaction.
        case afterEarlyRebase
    }

    /// The coordinator held at a point (or the promise of it).
    package struct Held: Sendable {
        fileprivate let reachedSignal: AsyncStream<Void>
        fileprivate let releaseSignal: AsyncStream<Void>.Continuation

        /// Returns once the coordinator waits at the point.
        package func reached() async {
            for await _ in reachedSignal { return }
        }

        /// Lets the coordinator go on.
        package func release() {
            releaseSignal.yield()
            releaseSignal.finish()
        }
    }

    private struct Armed {
        let reached: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
    }

    private let armed = Locked<[Point: Armed]>([:])

    package init() {}

    /// Holds the coordinator the next time it reaches `point`, once; later passes go on.
    package func holdNext(_ point: Point) -> Held {
        let (reached, reachedContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        armed.withLock { $0[point] = Armed(reached: reachedContinuation, release: release) }
        return Held(reachedSignal: reached, releaseSignal: releaseContinuation)
    }

    package func whileTerminating(appID: String) async { await pass(.whileTerminating) }
    package func afterEarlyRebase(realmID: Int64) async { await pass(.afterEarlyRebase) }

    private func pass(_ point: Point) async {
        guard let hold = armed.withLock({ $0.removeValue(forKey: point) }) else { return }
        hold.reached.yield()
        hold.reached.finish()
        for await _ in hold.release { return }
    }
}
