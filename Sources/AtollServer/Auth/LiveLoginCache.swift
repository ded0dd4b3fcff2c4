import AtollCore
import Foundation

/// Which logins (devices: one refresh token each) were live when last read from the store, kept a
/// few seconds, so that checking an access token's login on every bind, link or user deletion
/// costs a store read only now and then.
///
/// Bounded: at most ``capacity`` entries, each trusted for ``lifetime`` seconds. A revocation on
/// this node forgets its entries at once (``forget(userID:deviceID:)``); one on another node is
/// forgotten with its "sessions ended" announcement, or at the latest after ``lifetime``.
///
/// A store read that a revocation overtook is not recorded: ``record(deviceID:userID:live:now:readSince:)``
/// takes the ``generation`` from before the read, and any forgetting since makes it a no-op.
///
/// ```swift
/// if let live = cache.isLive(deviceID: device, now: now) { return live }
/// let generation = cache.generation
/// let live = try await store.liveDevices([device]).contains(device)
/// cache.record(deviceID: device, userID: user, live: live, now: now, readSince: generation)
/// ```
final class LiveLoginCache: Sendable {
    let capacity: Int
    let lifetime: TimeInterval

    private struct Entry {
        var userID: String
        var live: Bool
        var checkedAt: Date
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Bumped by every forgetting.
        var generation: UInt64 = 0
    }

    private let state = Locked(State())

    /// Changes whenever something is forgotten: read it before a store read whose answer is to be
    /// recorded.
    var generation: UInt64 { state.withLock { $0.generation } }

    init(capacity: Int = 10_000, lifetime: TimeInterval = 5) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// Whether the login of `deviceID` was live at a check less than ``lifetime`` ago; nil when
    /// it must be read again.
    func isLive(deviceID: String, now: Date) -> Bool? {
        state.withLock { state in
            guard let entry = state.entries[deviceID] else { return nil }
            let age = now.timeIntervalSince(entry.checkedAt)
            guard age >= 0, age < lifetime else {
                state.entries[deviceID] = nil
                return nil
            }
            return entry.live
        }
    }

    /// Remembers what the store said of `deviceID` at `now`, unless something was forgotten since
    /// `generation` (read before the store was): that answer may predate a revocation.
    func record(deviceID: String, userID: String, live: Bool, now: Date, readSince generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries[deviceID] == nil, state.entries.count >= capacity {
                state.entries = state.entries.filter { now.timeIntervalSince($0.value.checkedAt) < lifetime }
                // Still nearly full of fresh entries: start over rather than pay this on every insert.
                if state.entries.count >= capacity - capacity / 10 { state.entries.removeAll(keepingCapacity: true) }
            }
            state.entries[deviceID] = Entry(userID: userID, live: live, checkedAt: now)
        }
    }

    /// Forgets the login of `deviceID`, or every login of `userID` when it is nil (revoked,
    /// disabled, enabled again, deleted).
    func forget(userID: String, deviceID: String?) {
        state.withLock { state in
            state.generation &+= 1
            if let deviceID {
                state.entries[deviceID] = nil
            } else {
                state.entries = state.entries.filter { $0.value.userID != userID }
            }
        }
    }

    /// Forgets the login of `deviceID`.
    func forget(deviceID: String) {
        state.withLock { state in
            state.generation &+= 1
            state.entries[deviceID] = nil
        }
    }

    /// The number of entries (tests).
    var count: Int { state.withLock { $0.entries.count } }
}
