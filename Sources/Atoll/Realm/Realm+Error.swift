import AtollCore
import Foundation

extension Realm {
    /// Every error the local store reports, with realm-swift's codes and raw values. Match a code
    /// directly in `catch`, or read `code`:
    ///
    /// ```swift
    /// do {
    ///     let realm = try Realm(configuration: config)
    /// } catch Realm.Error.fileNotFound {
    ///     // a read-only realm whose file is missing
    /// } catch let error as Realm.Error where error.code == .schemaMismatch {
    ///     print(error.localizedDescription)
    /// }
    /// ```
    ///
    /// The codes up to 22 are realm-swift's (`RLMError`), with the same meaning and raw values.
    /// Codes from 100 on are Atoll's own, for misuse that realm-swift reports by raising an
    /// exception (and so crashing) where Atoll throws.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible, Equatable, Hashable {
        public enum Code: Int, Sendable, Hashable {
            /// A failure with no more specific code: a schema version lower than the file's, say.
            case fail = 1
            /// The file could not be opened, created or written.
            case fileAccess = 2
            /// The file (or a folder on its path) may not be read or written by this process.
            case filePermissionDenied = 3
            /// A copy was to be written where a file already exists.
            case fileExists = 4
            /// The file does not exist and may not be created (a read-only realm, a seed file), or
            /// the folder of a copy's destination does not exist.
            case fileNotFound = 5
            /// A read-only realm's file is of an older format that must be upgraded first (a file
            /// holding dates written before format 4): open it once without `readOnly`.
            case fileFormatUpgradeRequired = 6
            /// Never reported by Atoll (it uses no lock file).
            case incompatibleLockFile = 8
            /// Never reported by Atoll.
            case addressSpaceExhausted = 9
            /// The file's schema differs from the declared one and needs a migration: the schema
            /// changed without a higher `schemaVersion`, or a read-only file lacks declared types.
            case schemaMismatch = 10
            /// The operation needs the realm closed: `deleteFiles(for:)` of an open realm.
            case alreadyOpen = 12
            /// An argument that cannot be used: an encryption key that is not 64 bytes long.
            case invalidInput = 13
            /// Never reported by Atoll yet (a full disk is reported as `fileAccess`).
            case outOfDiskSpace = 14
            /// Never reported by Atoll.
            case incompatibleSession = 15
            /// The file was written in a newer realm file format than this version of Atoll reads.
            case unsupportedFileFormatVersion = 16
            /// Never reported by Atoll.
            case multipleSyncAgents = 17
            /// Never reported by Atoll yet (a rejected subscription is a `SyncError`).
            case subscriptionFailed = 18
            /// Never reported by Atoll yet.
            case fileOperationFailed = 19
            /// The file is not a realm, or its contents are damaged.
            case invalidDatabase = 20
            /// Never reported by Atoll.
            case incompatibleHistories = 21
            /// Never reported by Atoll yet.
            case noSubscriptionForWrite = 22

            /// Atoll: a realm was used on a thread or actor other than its own.
            case wrongThread = 101
            /// Atoll: `write(_:)` while a write transaction is already open.
            case alreadyInWriteTransaction = 102
            /// Atoll: `commitWrite()` with no write transaction open.
            case notInWriteTransaction = 103
            /// Atoll: a write to a read-only or frozen realm.
            case readOnly = 104
            /// Atoll: a query could not be parsed or does not fit the schema.
            case invalidQuery = 105
            /// Atoll: a value does not fit the property it is assigned to.
            case invalidValue = 106
            /// Atoll: an object with this primary key already exists.
            case primaryKeyExists = 107
            /// Atoll: the object was deleted or its realm invalidated.
            case objectInvalidated = 108
            /// Atoll: the object belongs to another realm.
            case wrongRealm = 109
            /// Atoll: the schema declared in code is invalid.
            case invalidSchema = 110
            /// Atoll: a configuration that cannot be used for what was asked (e.g. `writeCopy` of
            /// a partition-synced realm to a flexible-sync configuration).
            case invalidConfiguration = 111
        }

        public let code: Code
        public let message: String
        /// The file the error is about, when there is one.
        public let path: String?
        /// The error that caused this one, if any (an SQLite error, a query error, …).
        public let underlying: (any Swift.Error & Sendable)?

        public init(_ code: Code, _ message: String, path: String? = nil, underlying: (any Swift.Error & Sendable)? = nil) {
            self.code = code
            self.message = message
            self.path = path
            self.underlying = underlying
        }

        /// realm-swift's form: the message is the user info's `NSLocalizedDescriptionKey` and the
        /// file its `NSFilePathErrorKey`.
        public init(_ code: Code, userInfo: [String: Any] = [:]) {
            self.init(code, userInfo[NSLocalizedDescriptionKey] as? String ?? "Realm error \(code.rawValue)",
                      path: userInfo[NSFilePathErrorKey] as? String)
        }

        /// What an asynchronous call reports when it ends with neither a result nor an error.
        public static let callFailed = Error(.fail, "Call failed")

        /// The file the error is about, or `nil`.
        public var fileURL: URL? { path.map { URL(fileURLWithPath: $0) } }

        /// The message under `NSLocalizedDescriptionKey` and the file under `NSFilePathErrorKey`.
        public var userInfo: [String: Any] {
            var info: [String: Any] = [NSLocalizedDescriptionKey: message]
            if let path { info[NSFilePathErrorKey] = path }
            return info
        }

        public var description: String { "Realm error \(code) (\(code.rawValue)): \(message)" }
        public var localizedDescription: String { message }

        public static func == (lhs: Error, rhs: Error) -> Bool { lhs.code == rhs.code && lhs.message == rhs.message }
        public func hash(into hasher: inout Hasher) {
            hasher.combine(code)
            hasher.combine(message)
        }
    }
}

extension Realm.Error: CustomNSError, LocalizedError {
    /// realm-swift's error domain, so `(error as NSError).domain` reads as it does there.
    public static var errorDomain: String { "io.realm" }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { userInfo }
    public var errorDescription: String? { message }
}

extension Realm.Error.Code {
    /// Lets a code stand for every `Realm.Error` with it in a `catch` clause or a `switch`:
    ///
    /// ```swift
    /// do { try Realm.deleteFiles(for: config) } catch Realm.Error.alreadyOpen { … }
    /// ```
    public static func ~= (code: Realm.Error.Code, error: any Swift.Error) -> Bool {
        (error as? Realm.Error)?.code == code
    }
}

// The codes as members of `Realm.Error`, as realm-swift spells them in a `catch`.
extension Realm.Error {
    public static var fail: Code { .fail }
    public static var fileAccess: Code { .fileAccess }
    public static var filePermissionDenied: Code { .filePermissionDenied }
    public static var fileExists: Code { .fileExists }
    public static var fileNotFound: Code { .fileNotFound }
    public static var fileFormatUpgradeRequired: Code { .fileFormatUpgradeRequired }
    public static var incompatibleLockFile: Code { .incompatibleLockFile }
    public static var addressSpaceExhausted: Code { .addressSpaceExhausted }
    public static var schemaMismatch: Code { .schemaMismatch }
    public static var alreadyOpen: Code { .alreadyOpen }
    public static var invalidInput: Code { .invalidInput }
    public static var outOfDiskSpace: Code { .outOfDiskSpace }
    public static var incompatibleSession: Code { .incompatibleSession }
    public static var unsupportedFileFormatVersion: Code { .unsupportedFileFormatVersion }
    public static var multipleSyncAgents: Code { .multipleSyncAgents }
    public static var subscriptionFailed: Code { .subscriptionFailed }
    public static var fileOperationFailed: Code { .fileOperationFailed }
    public static var invalidDatabase: Code { .invalidDatabase }
    public static var incompatibleHistories: Code { .incompatibleHistories }
    public static var noSubscriptionForWrite: Code { .noSubscriptionForWrite }
    public static var wrongThread: Code { .wrongThread }
    public static var alreadyInWriteTransaction: Code { .alreadyInWriteTransaction }
    public static var notInWriteTransaction: Code { .notInWriteTransaction }
    public static var readOnly: Code { .readOnly }
    public static var invalidQuery: Code { .invalidQuery }
    public static var invalidValue: Code { .invalidValue }
    public static var primaryKeyExists: Code { .primaryKeyExists }
    public static var objectInvalidated: Code { .objectInvalidated }
    public static var wrongRealm: Code { .wrongRealm }
    public static var invalidSchema: Code { .invalidSchema }
    public static var invalidConfiguration: Code { .invalidConfiguration }
}
