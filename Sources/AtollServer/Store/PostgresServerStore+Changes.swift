import Foundation
import Synchronization
import Logging
import PostgresNIO

/// How the nodes on one PostgreSQL database tell each other of their changes: `NOTIFY` on one
/// channel, with the sending node's id first so a node skips its own. A notification is sent when
/// its transaction commits (new history is announced only once it is readable) and is at most a
/// line; the receivers read what they need from the tables.
extension PostgresServerStore {
    static let changeChannel = "atoll_changes"

    /// The NOTIFY payload of `change` made by this node: the node, the time it was sent (ms since
    /// 1970, for the receivers' lag) and the change.
    func notification(_ change: StoreChange) -> String { notification(payload: change.payload) }

    /// The NOTIFY payload of a change already written as its ``StoreChange/payload`` line.
    func notification(payload: String) -> String {
        "\(nodeID)\t\(Int64(Date().timeIntervalSince1970 * 1000))\t\(payload)"
    }

    /// Calls `record` with the lag of every notification heard from another node (`/metrics`).
    public func observeNotificationLag(_ record: @escaping @Sendable (Duration) -> Void) {
        lagObserver.withLock { $0 = record }
    }

    /// Announces `change` within `connection`'s transaction (sent when it commits).
    func announce(_ change: StoreChange, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.changeChannel), \(notification(change)))", logger: logger)
    }

    public func publish(_ change: StoreChange) async throws {
        try await client.query("SELECT pg_notify(\(Self.changeChannel), \(notification(change)))", logger: logger)
    }

    public func changesFromOtherNodes() -> AsyncStream<StoreChange>? {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingNewest(100_000))
        let listener = Task { [self] in
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    // One connection of the pool stays listening; every (re)start may have missed
                    // notifications, so the node checks what it holds.
                    try await client.withConnection { connection in
                        let notifications = try await connection.listen(Self.changeChannel)
                        continuation.yield(.missed)
                        delay = .milliseconds(100)
                        for try await notification in notifications {
                            guard let (node, sentAt, change) = Self.change(from: notification.payload), node != nodeID else { continue }
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

    /// The sending node and the change of a payload, or nil for one this version does not read.
    static func change(from payload: String) -> (node: String, sentAt: Int64, change: StoreChange)? {
        let parts = payload.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let sentAt = Int64(parts[1]), let change = StoreChange(payload: parts[2]) else { return nil }
        return (String(parts[0]), sentAt, change)
    }
}
