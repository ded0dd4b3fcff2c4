import AtollCore
import Foundation
import Logging
import ServiceLifecycle

/// Compacts every app's history now and then (apps with a maximum offline time only), until the
/// server shuts down. Operators can also compact on demand (`POST apps/{app}/compact`).
struct CompactionService: Service {
    /// How often compaction runs, in seconds (by the server's clock).
    static let interval: TimeInterval = 600

    let coordinator: SyncCoordinator
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await clock.sleep(clock.now().addingTimeInterval(Self.interval))
                do {
                    try await coordinator.compact()
                } catch {
                    logger.error("history compaction failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
