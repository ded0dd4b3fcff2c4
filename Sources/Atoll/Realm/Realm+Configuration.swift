import AtollCore
import Foundation

extension Realm {
    /// Where a realm lives and what it holds.
    ///
    /// ```swift
    /// var config = Realm.Configuration()
    /// config.fileURL = folder.appendingPathComponent("tasks.realm")
    /// config.objectTypes = [Task.self]
    /// let realm = try Realm(configuration: config)
    /// ```
    public struct Configuration: @unchecked Sendable {
        /// The file holding the realm. Setting it clears `inMemoryIdentifier`.
        public var fileURL: URL? {
            get { _fileURL }
            set { _fileURL = newValue; _inMemoryIdentifier = nil }
        }
        /// Realms with the same identifier share their data in memory for as long as one is open.
        /// Setting it clears `fileURL` and `seedFilePath`.
        public var inMemoryIdentifier: String? {
            get { _inMemoryIdentifier }
            set {
                _inMemoryIdentifier = newValue
                _fileURL = nil
                if newValue != nil { _seedFilePath = nil }
            }
        }
        /// A realm file copied to `fileURL` when the realm is opened and no file is there yet: a
        /// realm bundled with the app, with its first data. Setting it clears `inMemoryIdentifier`.
        ///
        /// ```swift
        /// config.seedFilePath = Bundle.main.url(forResource: "seed", withExtension: "realm")
        /// ```
        ///
        /// Make the seed with `writeCopy(toFile:)` (or, for a synced realm, with
        /// `writeCopy(configuration:)` to the synced configuration). A missing seed file makes the
        /// open fail with `Realm.Error.fileNotFound`.
        public var seedFilePath: URL? {
            get { _seedFilePath }
            set {
                _seedFilePath = newValue
                if newValue != nil { _inMemoryIdentifier = nil }
            }
        }
        private var _fileURL: URL?
        private var _inMemoryIdentifier: String?
        private var _seedFilePath: URL?
        /// The types stored; `nil` means every `Object` subclass the process uses.
        public var objectTypes: [ObjectBase.Type]?
        public var schemaVersion: UInt64 = 0
        public var migrationBlock: MigrationBlock?
        public var deleteRealmIfMigrationNeeded = false
        public var readOnly = false
        /// The most versions of the file that open realms of this process may hold at once (live
        /// ones, and frozen ones kept alive): a write that would make one more fails with
        /// `Realm.Error.fail` instead. Versions held for long make the file grow; a low limit
        /// during development finds where. `nil` (or 0): no limit.
        public var maximumNumberOfActiveVersions: UInt?
        /// A 64-byte key that encrypts the file (and its log) at rest, or `nil` for a plaintext
        /// file. Every open of the file needs the same key; keep it in the keychain, never in
        /// the app's files. docs/storage.md says what it protects and what it does not.
        ///
        /// ```swift
        /// let key = Data((0..<64).map { _ in UInt8.random(in: .min ... .max) })  // a CSPRNG
        /// let realm = try Realm(configuration: Realm.Configuration(encryptionKey: key))
        /// ```
        ///
        /// Opening throws `.invalidInput` for a key that is not 64 bytes, and `.fileAccess` for a
        /// wrong key, an encrypted file without a key or a plaintext file with one. To add,
        /// change or remove a key, write a copy: `writeCopy(toFile:encryptionKey:)`.
        public var encryptionKey: Data?
        /// Called when the file is first opened in the process (no other `Realm` of it open) with
        /// the file's total size and the bytes its data uses; returning `true` compacts the file
        /// (SQLite's `VACUUM`) before the realm opens.
        ///
        /// ```swift
        /// config.shouldCompactOnLaunch = { totalBytes, usedBytes in
        ///     totalBytes > 100 * 1024 * 1024 && Double(usedBytes) / Double(totalBytes) < 0.5
        /// }
        /// ```
        public var shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)?
        /// How the realm syncs; `nil` for a local realm. Made by `user.configuration(partitionValue:)`
        /// and `user.flexibleSyncConfiguration()`.
        public var syncConfiguration: SyncConfiguration?
        /// Tests only: a local realm records its commits in the file's history as a synced realm
        /// does (a local realm keeps none; docs/storage.md "History").
        package var recordsHistoryForTesting = false

        public init(
            fileURL: URL? = URL(fileURLWithPath: Realm.defaultDirectory, isDirectory: true)
                .appendingPathComponent("default.realm"),
            inMemoryIdentifier: String? = nil,
            syncConfiguration: SyncConfiguration? = nil,
            encryptionKey: Data? = nil,
            readOnly: Bool = false,
            schemaVersion: UInt64 = 0,
            migrationBlock: MigrationBlock? = nil,
            deleteRealmIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil,
            objectTypes: [ObjectBase.Type]? = nil,
            seedFilePath: URL? = nil
        ) {
            if let inMemoryIdentifier {
                self.inMemoryIdentifier = inMemoryIdentifier
            } else if let syncConfiguration, fileURL == Self.defaultFileURL {
                // A synced realm lives in its user's folder unless the caller chose a file.
                self.fileURL = syncConfiguration.user.syncedFileURL(for: syncConfiguration)
            } else {
                self.fileURL = fileURL
            }
            self.syncConfiguration = syncConfiguration
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
            if let seedFilePath { self.seedFilePath = seedFilePath }
        }

        /// `default.realm` in ``Realm/defaultDirectory``: the `fileURL` of a configuration that names none.
        static var defaultFileURL: URL {
            URL(fileURLWithPath: Realm.defaultDirectory, isDirectory: true).appendingPathComponent("default.realm")
        }

        private static let defaultLock = NSLock()
        nonisolated(unsafe) private static var _default = Configuration()

        /// The configuration `Realm()` uses.
        public static var defaultConfiguration: Configuration {
            get { defaultLock.withLock { _default } }
            set { defaultLock.withLock { _default = newValue } }
        }

        /// A key identifying the storage this configuration opens.
        var storageKey: String {
            if let id = inMemoryIdentifier { return "memory:" + id }
            return "file:" + (fileURL?.standardizedFileURL.path ?? "")
        }
    }

    /// The folder holding `default.realm` (and synced realms under `atoll/`): `ATOLL_HOME` if set,
    /// else where realm-swift puts its files on the platform (``DefaultDirectory``).
    public static var defaultDirectory: String {
        let files = FileManager.default
        func folder(_ kind: FileManager.SearchPathDirectory) -> String? { files.urls(for: kind, in: .userDomainMask).first?.path }
        let directory = DefaultDirectory(
            platform: .current, environment: ProcessInfo.processInfo.environment,
            documents: folder(.documentDirectory), applicationSupport: folder(.applicationSupportDirectory),
            caches: folder(.cachesDirectory), bundleIdentifier: Bundle.main.bundleIdentifier,
            executableName: Bundle.main.executableURL?.lastPathComponent, currentDirectory: files.currentDirectoryPath)
        let path = directory.path
        if directory.isPerApplication { try? files.createDirectory(atPath: path, withIntermediateDirectories: true) }
        return path
    }
}

/// Where `default.realm` goes, as realm-swift chooses it: tvOS keeps files in Caches (it may not
/// write to Documents); iOS, watchOS and visionOS in Documents (not visible to the user there); a
/// Mac (Catalyst included) in Application Support, in a folder named after the bundle identifier
/// (or the executable) when not sandboxed, so that two apps do not share a file; Linux in
/// Documents of the account's home. `ATOLL_HOME` overrides all of them.
package struct DefaultDirectory: Equatable {
    package enum Platform: Equatable, Sendable {
        case iOS, tvOS, watchOS, visionOS, macOS, macCatalyst, linux

        package static var current: Platform {
            #if targetEnvironment(macCatalyst)
            .macCatalyst
            #elseif os(tvOS)
            .tvOS
            #elseif os(watchOS)
            .watchOS
            #elseif os(visionOS)
            .visionOS
            #elseif os(iOS)
            .iOS
            #elseif os(macOS)
            .macOS
            #else
            .linux
            #endif
        }
    }

    package var platform: Platform
    package var environment: [String: String]
    package var documents: String?
    package var applicationSupport: String?
    package var caches: String?
    package var bundleIdentifier: String?
    package var executableName: String?
    package var currentDirectory: String

    package init(platform: Platform, environment: [String: String], documents: String?, applicationSupport: String?,
                 caches: String?, bundleIdentifier: String?, executableName: String?, currentDirectory: String) {
        self.platform = platform
        self.environment = environment
        self.documents = documents
        self.applicationSupport = applicationSupport
        self.caches = caches
        self.bundleIdentifier = bundleIdentifier
        self.executableName = executableName
        self.currentDirectory = currentDirectory
    }

    /// Whether ``path`` is a folder of this application's own that may need creating.
    package var isPerApplication: Bool {
        environment["ATOLL_HOME"] == nil && [.macOS, .macCatalyst].contains(platform) && environment["APP_SANDBOX_CONTAINER_ID"] == nil
    }

    package var path: String {
        if let home = environment["ATOLL_HOME"] { return home }
        switch platform {
        case .tvOS:
            return caches ?? currentDirectory
        case .iOS, .watchOS, .visionOS, .linux:
            return documents ?? currentDirectory
        case .macOS, .macCatalyst:
            guard let support = applicationSupport else { return documents ?? currentDirectory }
            guard isPerApplication, let name = bundleIdentifier ?? executableName else { return support }
            return (support as NSString).appendingPathComponent(name)
        }
    }
}

/// Runs during a migration with the old schema version.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void
