import AtollCore
import Logging
import PostgresNIO

/// Tells the other nodes of this node's new history, after the history committed: in order, and
/// several announcements per `NOTIFY` transaction when they queue up.
///
/// Not inside the transactions that write the history: PostgreSQL takes a database-wide lock in
/// the commit of every transaction that notifies and holds it through the WAL flush, so
/// notifying writers commit one at a time, which capped integrations at one per disk flush for
/// the whole cluster. Separate, the writers' commits share flushes; the announcements' own
/// transactions do not wait for a flush at all. A node that crashes between a commit and its
/// announcement costs the other nodes only the time to their periodic check against the store.
final class PostgresAnnouncer: Sendable {
    /// The most announcements one `NOTIFY` transaction carries.
    static let maxBatch = 256
    /// The most announcements waiting (the database unreachable): older ones are dropped, which
    /// only delays the other nodes.
    static let maxQueued = 10_000

    /// The announcements waiting, shared with the sending task.
    private final class Queue: Sendable {
        let lines = Locked<[String]>([])
    }

    private let waiting: Queue
    private let signal: AsyncStream<Void>.Continuation
    private let task: Task<Void, Never>

    init(client: PostgresClient, channel: String, logger: Logger) {
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.signal = signal
        let queue = Queue()
        self.waiting = queue
        task = Task {
            for await _ in signals {
                while !Task.isCancelled {
                    let batch = queue.lines.withLock { waiting -> [String] in
                        let batch = Array(waiting.prefix(Self.maxBatch))
                        waiting.removeFirst(batch.count)
                        return batch
                    }
                    guard !batch.isEmpty else { break }
                    do {
                        for try await _ in try await client.execute(
                            PostgresStatements.Announce(channel: channel, payloads: batch), logger: logger) {}
                    } catch {
                        logger.warning("could not announce new history to the other nodes; they catch up at their next check",
                                       metadata: ["error": "\(error)", "announcements": "\(batch.count)"])
                    }
                }
            }
        }
    }

    /// Queues `payload` (a change channel line) for sending.
    func announce(_ payload: String) {
        waiting.lines.withLock { waiting in
            if waiting.count >= Self.maxQueued { waiting.removeFirst(waiting.count - Self.maxQueued + 1) }
            waiting.append(payload)
        }
        signal.yield()
    }

    /// Sends what is queued, then stops; gives up on what is left after `deadline` (a database
    /// that does not answer must not hold a node's shutdown).
    func finish(deadline: Duration = .seconds(5)) async {
        signal.finish()
        let task = task
        let (ended, end) = AsyncStream<Void>.makeStream()
        Task {
            await task.value
            end.yield()
        }
        let watchdog = Task {
            try await Task.sleep(for: deadline)
            end.yield()
        }
        for await _ in ended { break }
        watchdog.cancel()
        task.cancel()
    }
}
