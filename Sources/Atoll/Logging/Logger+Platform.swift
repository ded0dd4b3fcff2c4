import AtollCore
import Foundation
#if canImport(os)
import os
#endif

/// Where the SDK's lines go by default: the unified log on Apple platforms (`os.Logger`: Console,
/// `log stream --predicate 'subsystem == "io.atoll"'`, Xcode's console), standard error elsewhere.
extension Logger {
    /// The unified log's subsystem of Atoll's lines; each line's category is its `LogCategory`.
    static let unifiedLogSubsystem = "io.atoll"

    /// The unified log's type for a line of `level`.
    enum UnifiedLogType: Sendable, Equatable {
        case debug, info, `default`, error, fault
    }

    /// Faults and errors are kept by the system, warnings as notices; `.info` is kept in memory and
    /// the detailed levels are debug lines, shown only while someone streams them.
    static func unifiedLogType(for level: LogLevel) -> UnifiedLogType {
        switch level {
        case .fatal: .fault
        case .error: .error
        case .warn: .default
        case .info: .info
        case .off, .detail, .debug, .trace, .all: .debug
        }
    }

    /// The logger of a new process: `.info` and below, to the platform's log.
    static func platformDefault() -> Logger {
        #if canImport(os)
        unifiedLog()
        #else
        standardError()
        #endif
    }

    #if canImport(os)
    /// `.info` and below to the unified log, one `os.Logger` per category. Atoll's lines carry no
    /// token, password or object value, so they are logged as public.
    static func unifiedLog() -> Logger {
        let loggers = Locked<[String: os.Logger]>([:])
        return Logger(threshold: .info) { level, category, message in
            let logger = loggers.withLock { loggers in
                if let logger = loggers[category.rawValue] { return logger }
                let logger = os.Logger(subsystem: unifiedLogSubsystem, category: category.rawValue)
                loggers[category.rawValue] = logger
                return logger
            }
            let type: OSLogType = switch unifiedLogType(for: level) {
            case .debug: .debug
            case .info: .info
            case .default: .default
            case .error: .error
            case .fault: .fault
            }
            logger.log(level: type, "\(message, privacy: .public)")
        }
    }
    #endif
}
