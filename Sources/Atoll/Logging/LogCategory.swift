import AtollCore
import Foundation

/// What part of the SDK a log line comes from (realm-swift's categories): a level set for a
/// category applies to it and every category under it.
///
/// ```swift
/// Logger.setLogLevel(.debug, for: Category.Sync.Client.session)
/// let level = Logger.logLevel(for: Category.app)
/// ```
public protocol LogCategory: Sendable {
    /// The category's dotted name, `Realm.Sync.Client.Session`.
    var rawValue: String { get }
}

/// The categories, under `Realm`: `Storage` (`Transaction`, `Query`, `Object`, `Notification`),
/// `Sync` (`Client`: `Session`, `Changeset`, `Network`, `Reset`; `Server`), `App`, `SDK`.
public enum Category: String, LogCategory {
    /// Every category.
    case realm = "Realm"
    /// The SDK itself: opening files, initial subscriptions.
    case sdk = "Realm.SDK"
    /// The app services: HTTP requests, logins, tokens.
    case app = "Realm.App"

    public enum Storage: String, LogCategory {
        case all = "Realm.Storage"
        case transaction = "Realm.Storage.Transaction"
        case query = "Realm.Storage.Query"
        case object = "Realm.Storage.Object"
        case notification = "Realm.Storage.Notification"
    }

    public enum Sync: String, LogCategory {
        case all = "Realm.Sync"
        case server = "Realm.Sync.Server"

        public enum Client: String, LogCategory {
            case all = "Realm.Sync.Client"
            /// Sessions: their life cycle and state.
            case session = "Realm.Sync.Client.Session"
            /// Uploads and downloads, with their sizes.
            case changeset = "Realm.Sync.Client.Changeset"
            /// The connection: opening, closing, keep-alive.
            case network = "Realm.Sync.Client.Network"
            /// Client resets.
            case reset = "Realm.Sync.Client.Reset"
        }
    }
}

/// Levels set for categories below `Realm` (`Realm` itself is `Logger.shared.level`).
enum CategoryLevels {
    private static let levels = Locked<[String: LogLevel]>([:])

    /// Sets `level` for `name` and every category under it.
    static func set(_ level: LogLevel?, for name: String) {
        levels.withLock { levels in
            for key in levels.keys where key == name || key.hasPrefix(name + ".") { levels[key] = nil }
            if let level { levels[name] = level }
        }
    }

    /// The level of the most specific category set at or above `name`, if any.
    static func level(for name: String) -> LogLevel? {
        levels.withLock { levels in
            guard !levels.isEmpty else { return nil }
            var name = Substring(name)
            while true {
                if let level = levels[String(name)] { return level }
                guard let dot = name.lastIndex(of: ".") else { return nil }
                name = name[..<dot]
            }
        }
    }
}

extension Logger {
    /// Sets the level of `category` and every category under it (of them all for `Category.realm`).
    ///
    /// ```swift
    /// Logger.setLogLevel(.trace, for: Category.Sync.all)
    /// ```
    public static func setLogLevel(_ level: LogLevel, for category: LogCategory = Category.realm) {
        if category.rawValue == Category.realm.rawValue {
            CategoryLevels.set(nil, for: Category.realm.rawValue)
            shared.level = level
        } else {
            CategoryLevels.set(level, for: category.rawValue)
        }
    }

    /// The level lines of `category` pass at.
    public static func logLevel(for category: LogCategory) -> LogLevel {
        CategoryLevels.level(for: category.rawValue) ?? shared.level
    }
}
