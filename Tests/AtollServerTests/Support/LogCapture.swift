import AtollCore
import Foundation
import Logging

/// Keeps what a logger writes, for tests that check what is (not) logged and at which level.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        /// The message and its metadata, as one line.
        var text: String
    }

    private let entries = Locked<[Entry]>([])

    /// A logger at `level` writing here.
    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "atoll-server") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    var all: [Entry] { entries.withLock { $0 } }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).merging(metadata) { first, _ in first }
                .map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            capture.append(Entry(level: event.level, text: "\(event.message) \(fields)"))
        }
    }
}
