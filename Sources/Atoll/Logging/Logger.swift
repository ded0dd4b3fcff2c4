import AtollCore
import Foundation
import Logging

/// How much the SDK logs. Each level includes the ones before it: `.warn` logs warnings, errors
/// and fatal errors; `.off` logs nothing, `.all` everything.
public enum LogLevel: UInt, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case off, fatal, error, warn, info, detail, debug, trace, all

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// As realm-swift's `LogLevel` (Objective-C's `RLMLogLevel`) prints: `RLMLogLevel(rawValue: 6)`
    /// for `.debug`, so log callbacks that interpolate a level print what they printed with Realm.
    public var description: String { "RLMLogLevel(rawValue: \(rawValue))" }

    /// The level's name, for Atoll's own log lines.
    var name: String {
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

/// Where the SDK's log lines go: `Logger.shared`, which drops lines above the level of their
/// category (`level` unless `setLogLevel(_:for:)` set another) and hands the others to its log
/// function (on any thread, possibly several at once).
///
/// ```swift
/// Logger.shared.level = .warn
/// Logger.shared = Logger(function: { level, category, message in
///     print("Atoll \(category.rawValue) \(level): \(message)")   // level: RLMLogLevel(rawValue: 4)
/// })
/// ```
/// The default logger writes lines of level `.info` and below to the unified log on Apple platforms
/// (`os.Logger`, subsystem `io.atoll`, the line's category as category) and to standard error
/// elsewhere. In normal
/// operation the SDK logs nothing at `.info` or above: HTTP requests are `.detail`, connections
/// and sessions `.detail`/`.debug`, uploads and downloads `.trace`, failures `.warn`/`.error`.
/// No line carries a token, password or object value.
public final class Logger: Sendable {
    private let threshold: Locked<LogLevel>
    private let logFunction: @Sendable (LogLevel, LogCategory, String) -> Void

    /// A logger that passes every line of `level` or below to `logFunction`.
    public init(level: LogLevel, logFunction: @escaping @Sendable (LogLevel, String) -> Void) {
        threshold = Locked(level)
        self.logFunction = { level, _, message in logFunction(level, message) }
    }

    /// A logger that passes every line to `function` with its category, at the level the
    /// shared logger has now (`setLogLevel(_:for:)` changes it).
    public init(function: @escaping @Sendable (LogLevel, LogCategory, String) -> Void) {
        threshold = Locked(Logger.current.withLock { $0.level })
        logFunction = function
    }

    /// A logger of `threshold` that passes lines to `function` with their category (the SDK's own
    /// default loggers, made before there is a shared logger to read a level from).
    init(threshold: LogLevel, function: @escaping @Sendable (LogLevel, LogCategory, String) -> Void) {
        self.threshold = Locked(threshold)
        logFunction = function
    }

    /// A logger of `level` that passes lines to `function` with their category.
    @available(*, deprecated, message: "Use init(function:)")
    public init(level: LogLevel, function: @escaping @Sendable (LogLevel, LogCategory, String) -> Void) {
        threshold = Locked(level)
        logFunction = function
    }

    /// The most detailed level this logger passes on (for `Category.realm`, so every category
    /// without a level of its own).
    public var level: LogLevel {
        get { threshold.withLock { $0 } }
        set { threshold.withLock { $0 = newValue } }
    }

    /// The logger of a new process: `.info` and below to standard error.
    static func standardError() -> Logger {
        Logger(level: .info) { level, message in
            let line = "\(Date().formatted(.iso8601)) Atoll \(level.name): \(message)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    private static let current = Locked<Logger>(platformDefault())

    /// The logger the SDK writes to; replace it to send the lines elsewhere.
    public static var shared: Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Whether a line of `level` in `category` would be passed on.
    func accepts(_ level: LogLevel, _ category: LogCategory = Category.sdk) -> Bool {
        guard level != .off else { return false }
        return level <= (CategoryLevels.level(for: category.rawValue) ?? self.level)
    }

    /// Passes the line on if its level is within the logger's.
    func log(_ level: LogLevel, _ category: LogCategory, _ message: @autoclosure () -> String) {
        guard accepts(level, category) else { return }
        logFunction(level, category, message())
    }

    /// Logs to the logger shared at the time of the call.
    static func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        shared.log(level, Category.sdk, message())
    }

    /// Logs a line of `category` to the logger shared at the time of the call.
    static func log(_ level: LogLevel, _ category: LogCategory, _ message: @autoclosure () -> String) {
        shared.log(level, category, message())
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
        get { Logger.logLevel(for: category).swiftLogThreshold }
        set {}
    }

    /// The category of the component's lines, from its label.
    var category: LogCategory {
        switch label {
        case "atoll.sync": Category.Sync.Client.network
        case "atoll.sync.session": Category.Sync.Client.session
        default: Category.sdk
        }
    }

    subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let logger = Logger.shared
        let level = LogLevel(event.level)
        let category = category
        guard logger.accepts(level, category) else { return }
        var extra = metadata
        if let more = event.metadata { extra.merge(more) { $1 } }
        let suffix = extra.isEmpty ? "" : " " + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        logger.log(level, category, "\(event.message)\(suffix)")
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
