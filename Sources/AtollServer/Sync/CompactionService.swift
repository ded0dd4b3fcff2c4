import Logging
import ServiceLifecycle

/// Compacts every app's history now and then (apps with a maximum offline time only), until the
/// server shuts down. Operators can also compact on demand (`POST apps/{app}/compact`).
struct CompactionService: Service {
    /// How often compaction runs.
    static let interval: Duration = .seconds(600)

    let coordinator: SyncCoordinator
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: Self.interval)
                do {
                    try await coordinator.compact()
                } catch {
                    logger.error("history compaction failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
