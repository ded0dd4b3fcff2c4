import Foundation
import Synchronization

/// Which logins (devices: one refresh token each) were live when last read from the store, kept a
/// few seconds, so that checking an access token's login on every bind, link or user deletion
/// costs a store read only now and then.
///
/// Bounded: at most ``capacity`` entries, each trusted for ``lifetime`` seconds. A revocation on
/// this node forgets its entries at once (``forget(userID:deviceID:)``); one on another node is
/// forgotten with its "sessions ended" announcement, or at the latest after ``lifetime``.
///
/// ```swift
/// if let live = cache.isLive(deviceID: device, now: now) { return live }
/// let live = try await store.liveDevices([device]).contains(device)
/// cache.record(deviceID: device, userID: user, live: live, now: now)
/// ```
final class LiveLoginCache: Sendable {
    let capacity: Int
    let lifetime: TimeInterval

    private struct Entry {
        var userID: String
        var live: Bool
        var checkedAt: Date
    }

    private let entries = Mutex<[String: Entry]>([:])

    init(capacity: Int = 10_000, lifetime: TimeInterval = 5) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// Whether the login of `deviceID` was live at a check less than ``lifetime`` ago; nil when
    /// it must be read again.
    func isLive(deviceID: String, now: Date) -> Bool? {
        entries.withLock { entries in
            guard let entry = entries[deviceID] else { return nil }
            let age = now.timeIntervalSince(entry.checkedAt)
            guard age >= 0, age < lifetime else {
                entries[deviceID] = nil
                return nil
            }
            return entry.live
        }
    }

    /// Remembers what the store said of `deviceID` at `now`.
    func record(deviceID: String, userID: String, live: Bool, now: Date) {
        entries.withLock { entries in
            if entries[deviceID] == nil, entries.count >= capacity {
                entries = entries.filter { now.timeIntervalSince($0.value.checkedAt) < lifetime }
                // Still nearly full of fresh entries: start over rather than pay this on every insert.
                if entries.count >= capacity - capacity / 10 { entries.removeAll(keepingCapacity: true) }
            }
            entries[deviceID] = Entry(userID: userID, live: live, checkedAt: now)
        }
    }

    /// Forgets the login of `deviceID`, or every login of `userID` when it is nil (revoked,
    /// disabled, enabled again, deleted).
    func forget(userID: String, deviceID: String?) {
        guard let deviceID else {
            entries.withLock { entries in entries = entries.filter { $0.value.userID != userID } }
            return
        }
        forget(deviceID: deviceID)
    }

    /// Forgets the login of `deviceID`.
    func forget(deviceID: String) {
        _ = entries.withLock { $0.removeValue(forKey: deviceID) }
    }

    /// The number of entries (tests).
    var count: Int { entries.withLock { $0.count } }
}
