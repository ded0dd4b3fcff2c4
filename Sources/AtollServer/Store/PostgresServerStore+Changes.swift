import Foundation
import Logging
import PostgresNIO

/// How the nodes on one PostgreSQL database tell each other of their changes: `NOTIFY` on one
/// channel, with the sending node's id first so a node skips its own. A notification is sent when
/// its transaction commits (new history is announced only once it is readable) and is at most a
/// line; the receivers read what they need from the tables.
///
/// Every line is sealed (``AnnouncementSeal``): a notification without the nodes' MAC, stale or
/// heard before is ignored, counted (``observeRejectedNotifications(_:)``) and logged, so a role
/// that may only connect to the database cannot make a node send clients history, end sessions or
/// terminate sync. Until ``authenticateAnnouncements(tokenSecret:)`` the node hears nothing.
extension PostgresServerStore {
    static let changeChannel = "atoll_changes"

    /// The NOTIFY payload of `change` made by this node: the node, the time it was sent (ms since
    /// 1970, for the receivers' lag) and the change.
    func notification(_ change: StoreChange) -> String { notification(payload: change.payload) }

    /// The NOTIFY payload of a change already written as its ``StoreChange/payload`` line, sealed
    /// (unsealed before ``authenticateAnnouncements(tokenSecret:)``: the other nodes ignore it).
    func notification(payload: String) -> String {
        let body = "\(nodeID)\t\(Int64(Date().timeIntervalSince1970 * 1000))\t\(payload)"
        return announcementSeal.withLock { $0 }?.seal(body) ?? body
    }

    /// Seals this node's announcements, and accepts the other nodes', under a key derived from
    /// `tokenSecret` (the same on every node of a deployment).
    package func authenticateAnnouncements(tokenSecret: String) {
        announcementSeal.withLock { $0 = AnnouncementSeal(tokenSecret: tokenSecret) }
    }

    /// Calls `record` with the reason (``AnnouncementSeal/Rejection``) of every notification
    /// ignored as not authentic (`/metrics`).
    package func observeRejectedNotifications(_ record: @escaping @Sendable (_ reason: String) -> Void) {
        rejectionObserver.withLock { $0 = record }
    }

    /// Calls `record` with the lag of every notification heard from another node (`/metrics`).
    package func observeNotificationLag(_ record: @escaping @Sendable (Duration) -> Void) {
        lagObserver.withLock { $0 = record }
    }

    /// Announces `change` within `connection`'s transaction (sent when it commits).
    func announce(_ change: StoreChange, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.changeChannel), \(notification(change)))", logger: logger)
    }

    package func publish(_ change: StoreChange) async throws {
        try await client.query("SELECT pg_notify(\(Self.changeChannel), \(notification(change)))", logger: logger)
    }

    package func changesFromOtherNodes(servedBy interest: RealmInterest?) -> AsyncStream<StoreChange>? {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingNewest(100_000))
        let listener = Task { [self] in
            var delay = Duration.milliseconds(100)
            var replays = AnnouncementReplayGuard()
            while !Task.isCancelled {
                do {
                    // One connection of the pool stays listening; every (re)start may have missed
                    // notifications, so the node checks what it holds.
                    try await client.withConnection { connection in
                        let notifications = try await connection.listen(Self.changeChannel)
                        continuation.yield(.missed)
                        delay = .milliseconds(100)
                        for try await notification in notifications {
                            guard concerns(notification.payload, interest) else { continue }
                            let heard = authentic(notification.payload, replays: &replays)
                            guard let (node, sentAt, change) = heard, node != nodeID else { continue }
                            let lag = Date().timeIntervalSince1970 * 1000 - Double(sentAt)
                            if let record = lagObserver.withLock({ $0 }) { record(.milliseconds(max(0, lag))) }
                            continuation.yield(change)
                        }
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning("store change feed interrupted; listening again", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in listener.cancel() }
        return stream
    }

    /// Whether a line may concern this node, from its header alone: not when it is this node's
    /// own, nor a history line of a realm `interest` does not admit. Such lines are dropped
    /// before their seal is checked or their entries decoded (the cost of reading them grew with
    /// the whole cluster's write rate); a forged line that claims so is dropped the same way,
    /// unacted on (and uncounted as forged). With no `interest` every other node's line
    /// concerns this one.
    private func concerns(_ line: String, _ interest: RealmInterest?) -> Bool {
        guard let header = AnnouncementHeader(line, sealed: announcementSeal.withLock({ $0 }) != nil) else { return true }
        if header.node == nodeID {
            interest?.count(.own)
            return false
        }
        guard let realmID = header.historyRealmID, let interest else { return true }
        guard interest.admits(realmID) else {
            interest.count(.skipped)
            return false
        }
        interest.count(.read)
        return true
    }

    /// The sending node, time and change of a notification that is authentic, fresh and new; nil
    /// (counted, logged at most once a minute) otherwise. This node's own lines pass too (skipped
    /// by the caller).
    private func authentic(_ line: String, replays: inout AnnouncementReplayGuard)
        -> (node: String, sentAt: Int64, change: StoreChange)?
    {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let rejection: AnnouncementSeal.Rejection
        switch announcementSeal.withLock({ $0 }).map({ $0.open(line) }) ?? .failure(.forged) {
        case .success(let (mac, body)):
            guard let heard = Self.change(from: String(body)) else { rejection = .unreadable; break }
            guard heard.node != nodeID else { return heard }
            if let refused = replays.admit(mac: mac, sentAt: heard.sentAt, now: now) { rejection = refused; break }
            return heard
        case .failure(let refused):
            rejection = refused
        }
        rejectionObserver.withLock { $0 }?(rejection.rawValue)
        let warn = rejectionWarned.withLock { last in
            guard now - last >= 60_000 else { return false }
            last = now
            return true
        }
        if warn {
            logger.warning("""
                ignored a change notification that is not from a node of this deployment (forged, stale or replayed); \
                any role that can NOTIFY on the database can send one: see docs/scaling.md, "Database roles"
                """, metadata: ["reason": "\(rejection.rawValue)", "bytes": "\(line.utf8.count)"])
        }
        return nil
    }

    /// The sending node and the change of a payload, or nil for one this version does not read.
    static func change(from payload: String) -> (node: String, sentAt: Int64, change: StoreChange)? {
        let parts = payload.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let sentAt = Int64(parts[1]), let change = StoreChange(payload: parts[2]) else { return nil }
        return (String(parts[0]), sentAt, change)
    }
}
