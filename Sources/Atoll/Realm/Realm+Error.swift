import AtollCore

extension Realm {
    /// Every error the local store reports. Match on `code`:
    ///
    /// ```swift
    /// do { _ = try Realm(configuration: config) }
    /// catch let error as Realm.Error where error.code == .schemaMismatch { … }
    /// ```
    public struct Error: Swift.Error, Sendable, CustomStringConvertible, Equatable {
        public enum Code: Int, Sendable, Hashable {
            /// The file could not be opened, created or written.
            case fileAccess = 2
            /// The file is not a realm, or its contents are damaged.
            case invalidDatabase = 3
            /// The file (or a folder on its path) may not be read or written by this process.
            case filePermissionDenied = 4
            /// The file does not exist and may not be created (a read-only realm, say).
            case fileNotFound = 5
            /// The file's schema differs from the declared one and no migration was allowed.
            case schemaMismatch = 10
            /// The schema changed and `schemaVersion` was not increased.
            case migrationRequired = 11
            /// `schemaVersion` is lower than the file's.
            case invalidSchemaVersion = 12
            /// A realm was used on a thread or actor other than its own.
            case wrongThread = 20
            /// `beginWrite()` while a write transaction is already open.
            case alreadyInWriteTransaction = 21
            /// A change was attempted outside a write transaction.
            case notInWriteTransaction = 22
            /// The realm is read-only.
            case readOnly = 23
            /// A query could not be parsed or does not fit the schema.
            case invalidQuery = 30
            /// A value does not fit the property it is assigned to.
            case invalidValue = 31
            /// An object with this primary key already exists.
            case primaryKeyExists = 32
            /// The object was deleted or its realm invalidated.
            case objectInvalidated = 33
            /// `writeCopy(configuration:)` was given a destination that already exists.
            case fileExists = 40
            /// The object belongs to another realm.
            case wrongRealm = 41
            /// The schema declared in code is invalid.
            case invalidSchema = 42
            /// A configuration that cannot be used for what was asked (e.g. `writeCopy` of a
            /// partition-synced realm to a flexible-sync configuration).
            case invalidConfiguration = 43
        }

        public let code: Code
        public let message: String
        /// The error that caused this one, if any (an SQLite error, a query error, …).
        public let underlying: (any Swift.Error & Sendable)?

        public init(_ code: Code, _ message: String, underlying: (any Swift.Error & Sendable)? = nil) {
            self.code = code
            self.message = message
            self.underlying = underlying
        }

        public var description: String { "Realm error \(code) (\(code.rawValue)): \(message)" }
        public var localizedDescription: String { message }

        public static func == (lhs: Error, rhs: Error) -> Bool { lhs.code == rhs.code && lhs.message == rhs.message }
    }
}
