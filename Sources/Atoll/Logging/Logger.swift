import Foundation
import Logging
import Synchronization

/// How much the SDK logs. Each level includes the ones before it: `.warn` logs warnings, errors
/// and fatal errors; `.off` logs nothing, `.all` everything.
public enum LogLevel: UInt, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case off, fatal, error, warn, info, detail, debug, trace, all

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .off: "off"
        case .fatal: "fatal"
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .detail: "detail"
        case .debug: "debug"
        case .trace: "trace"
        case .all: "all"
        }
    }
}

/// The earlier name of ``LogLevel`` (`app.syncManager.logLevel`).
public typealias SyncLogLevel = LogLevel

/// Where the SDK's log lines go: `Logger.shared`, which drops lines above its `level` and hands
/// the others to its log function (on any thread, possibly several at once).
///
/// ```swift
/// Logger.shared.level = .warn
/// Logger.shared = Logger(level: .info) { level, message in
///     print("Atoll \(level): \(message)")
/// }
/// ```
/// The default logger writes lines of level `.info` and below to standard error.
public final class Logger: Sendable {
    private let threshold: Mutex<LogLevel>
    private let logFunction: @Sendable (LogLevel, String) -> Void

    /// A logger that passes every line of `level` or below to `logFunction`.
    public init(level: LogLevel, logFunction: @escaping @Sendable (LogLevel, String) -> Void) {
        threshold = Mutex(level)
        self.logFunction = logFunction
    }

    /// The most detailed level this logger passes on.
    public var level: LogLevel {
        get { threshold.withLock { $0 } }
        set { threshold.withLock { $0 = newValue } }
    }

    private static let current = Mutex<Logger>(Logger(level: .info) { level, message in
        let line = "\(Date().formatted(.iso8601)) Atoll \(level): \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    })

    /// The logger the SDK writes to; replace it to send the lines elsewhere.
    public static var shared: Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Whether a line of `level` would be passed on.
    func accepts(_ level: LogLevel) -> Bool { level != .off && level <= self.level }

    /// Passes the line on if its level is within the logger's.
    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard accepts(level) else { return }
        logFunction(level, message())
    }

    /// Logs to the logger shared at the time of the call.
    static func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        shared.log(level, message())
    }
}

// MARK: swift-log bridge

/// A swift-log handler that forwards to `Logger.shared`: the SDK's components (sync sessions, the
/// connection, the WebSocket client underneath) log through swift-log, and their lines end up
/// where the app's `Logger` sends them, filtered by its `level`.
///
/// ```swift
/// let logger = Logging.Logger(label: "atoll.sync", factory: SharedLoggerHandler.init)
/// ```
struct SharedLoggerHandler: LogHandler {
    let label: String
    var metadata: Logging.Logger.Metadata = [:]

    init(label: String) { self.label = label }

    /// Follows `Logger.shared.level`. Setting it has no effect: the app sets the SDK's threshold
    /// on `Logger.shared` (or `syncManager.logLevel`), not per component.
    var logLevel: Logging.Logger.Level {
        get { Logger.shared.level.swiftLogThreshold }
        set {}
    }

    subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let logger = Logger.shared
        let level = LogLevel(event.level)
        guard logger.accepts(level) else { return }
        var extra = metadata
        if let more = event.metadata { extra.merge(more) { $1 } }
        let suffix = extra.isEmpty ? "" : " " + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        logger.log(level, "\(event.message)\(suffix)")
    }
}

extension LogLevel {
    /// The level of a swift-log line (`notice` counts as `info`, `critical` as `fatal`).
    init(_ level: Logging.Logger.Level) {
        self = switch level {
        case .trace: .trace
        case .debug: .debug
        case .info, .notice: .info
        case .warning: .warn
        case .error: .error
        case .critical: .fatal
        }
    }

    /// The most detailed swift-log level that can pass this threshold.
    var swiftLogThreshold: Logging.Logger.Level {
        switch self {
        case .off, .fatal: .critical
        case .error: .error
        case .warn: .warning
        case .info, .detail: .info
        case .debug: .debug
        case .trace, .all: .trace
        }
    }
}
