import Foundation
import Logging
import PostgresNIO

/// How the nodes on one PostgreSQL database tell each other of their changes: `NOTIFY` on one
/// channel, with the sending node's id first so a node skips its own. A notification is sent when
/// its transaction commits (new history is announced only once it is readable) and is at most a
/// line; the receivers read what they need from the tables.
extension PostgresServerStore {
    static let changeChannel = "atoll_changes"

    /// The NOTIFY payload of `change` made by this node.
    func notification(_ change: StoreChange) -> String { "\(nodeID)\t\(change.payload)" }

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
                            guard let (node, change) = Self.change(from: notification.payload), node != nodeID else { continue }
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
    static func change(from payload: String) -> (node: String, change: StoreChange)? {
        guard let tab = payload.firstIndex(of: "\t") else { return nil }
        guard let change = StoreChange(payload: payload[payload.index(after: tab)...]) else { return nil }
        return (String(payload[..<tab]), change)
    }
}
