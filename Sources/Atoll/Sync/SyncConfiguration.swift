import AtollCore
import Foundation

/// A value that names a partition of partition-based sync: `String`, `Int`, `ObjectId`, `UUID`,
/// or an optional of them (`nil` is the null partition).
public protocol PartitionValueConvertible: Sendable {
    var _partitionValue: PartitionValue { get }
}

extension String: PartitionValueConvertible { public var _partitionValue: PartitionValue { .string(self) } }
extension Int: PartitionValueConvertible { public var _partitionValue: PartitionValue { .int(Int64(self)) } }
extension Int64: PartitionValueConvertible { public var _partitionValue: PartitionValue { .int(self) } }
extension Int32: PartitionValueConvertible { public var _partitionValue: PartitionValue { .int(Int64(self)) } }
extension ObjectId: PartitionValueConvertible { public var _partitionValue: PartitionValue { .objectId(self) } }
extension UUID: PartitionValueConvertible { public var _partitionValue: PartitionValue { .uuid(self) } }
extension AnyBSON: PartitionValueConvertible {
    /// A string, integer, ObjectId or UUID; `.null` is the null partition. Other kinds name no
    /// partition: the program stops, as Realm's does, rather than sync the null partition.
    public var _partitionValue: PartitionValue {
        switch self {
        case .string(let value): .string(value)
        case .int32(let value): .int(Int64(value))
        case .int64(let value): .int(value)
        case .objectId(let value): .objectId(value)
        case .uuid(let value): .uuid(value)
        case .null: .null
        default: preconditionFailure("a partition value is a string, an integer, an ObjectId, a UUID or null, not \(self)")
        }
    }
}

extension Optional: PartitionValueConvertible where Wrapped: PartitionValueConvertible {
    public var _partitionValue: PartitionValue { self?._partitionValue ?? .null }
}

/// The subscriptions a flexible-sync realm starts with: `callback` adds them in an update of the
/// subscription set when the file is first opened, or every time with `rerunOnOpen`.
public final class InitialSubscriptionsConfiguration: Sendable {
    public let callback: @Sendable (SyncSubscriptionSet) -> Void
    public let rerunOnOpen: Bool

    public init(callback: @escaping @Sendable (SyncSubscriptionSet) -> Void, rerunOnOpen: Bool = false) {
        self.callback = callback
        self.rerunOnOpen = rerunOnOpen
    }
}

/// How a realm syncs: which user, and which partition or flexible sync.
public struct SyncConfiguration: @unchecked Sendable {
    /// The user the realm syncs as.
    public let user: User
    /// The partition, for partition-based sync.
    public let partition: PartitionValue?
    /// The partition as BSON (realm-swift's name); `nil` for flexible sync.
    public var partitionValue: AnyBSON? {
        switch partition {
        case nil: nil
        case .string(let value)?: .string(value)
        case .int(let value)?: .int64(value)
        case .objectId(let value)?: .objectId(value)
        case .uuid(let value)?: .uuid(value)
        case .null?: .null
        }
    }
    /// Whether the realm uses flexible sync (subscriptions choose its content).
    public var enableFlexibleSync: Bool { partition == nil }
    public var clientResetMode: ClientResetMode
    /// Whether an asynchronous open fails on errors it would otherwise retry (connection failures).
    public var cancelAsyncOpenOnNonFatalErrors: Bool
    /// For flexible sync: the subscriptions a realm starts with, added when it is first opened
    /// (or whenever it is opened anew, with `rerunOnOpen`).
    public var initialSubscriptions: InitialSubscriptionsConfiguration? = nil
    /// Whether the initial subscriptions run again whenever the file is opened anew (the first
    /// `Realm` of it in the process), to recompute dynamic queries such as time ranges.
    public var rerunOnOpen: Bool { initialSubscriptions?.rerunOnOpen ?? false }

    var target: SyncTarget { partition.map(SyncTarget.partition) ?? .flexible }

    /// The file name of the realm under the user's folder.
    var fileName: String {
        guard let partition else { return "flx_sync_default.realm" }
        let safe = partition.path.unicodeScalars.map { scalar -> String in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_".unicodeScalars.contains(scalar)
                ? String(scalar) : String(format: "%%%02X", scalar.value)
        }.joined()
        return safe + ".realm"
    }
}

extension User {
    /// A configuration for the realm of one partition, synced as this user.
    ///
    /// ```swift
    /// var config = user.configuration(partitionValue: "Some Partition Value")
    /// config.objectTypes = [Task.self]
    /// let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
    /// ```
    public func configuration<T: PartitionValueConvertible>(
        partitionValue: T, clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
        cancelAsyncOpenOnNonFatalErrors: Bool = false
    ) -> Realm.Configuration {
        syncedConfiguration(SyncConfiguration(user: self, partition: partitionValue._partitionValue,
                                              clientResetMode: clientResetMode,
                                              cancelAsyncOpenOnNonFatalErrors: cancelAsyncOpenOnNonFatalErrors))
    }

    /// A configuration for the user's flexible-sync realm (subscriptions arrive with the
    /// flexible-sync work; the server answers a flexible bind with an error until then).
    public func flexibleSyncConfiguration(
        clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
        cancelAsyncOpenOnNonFatalErrors: Bool = false
    ) -> Realm.Configuration {
        syncedConfiguration(SyncConfiguration(
            user: self, partition: nil, clientResetMode: clientResetMode,
            cancelAsyncOpenOnNonFatalErrors: cancelAsyncOpenOnNonFatalErrors))
    }

    /// A configuration for the user's flexible-sync realm that subscribes with
    /// `initialSubscriptions` when the realm is first opened, or on every open with `rerunOnOpen`
    /// (for queries over moving time ranges, say). Opening does not wait for these subscriptions.
    ///
    /// ```swift
    /// let config = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
    ///     subscriptions.append(QuerySubscription<Todo>(name: "all_todos"))
    /// })
    /// ```
    public func flexibleSyncConfiguration(
        clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
        cancelAsyncOpenOnNonFatalErrors: Bool = false,
        initialSubscriptions: @escaping @Sendable (SyncSubscriptionSet) -> Void,
        rerunOnOpen: Bool = false
    ) -> Realm.Configuration {
        syncedConfiguration(SyncConfiguration(
            user: self, partition: nil, clientResetMode: clientResetMode,
            cancelAsyncOpenOnNonFatalErrors: cancelAsyncOpenOnNonFatalErrors,
            initialSubscriptions: InitialSubscriptionsConfiguration(callback: initialSubscriptions, rerunOnOpen: rerunOnOpen)))
    }

    private func syncedConfiguration(_ sync: SyncConfiguration) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: syncedFileURL(for: sync))
        configuration.syncConfiguration = sync
        return configuration
    }

    /// Where this user's realm synced as `sync` lives.
    func syncedFileURL(for sync: SyncConfiguration) -> URL {
        core.folder.appendingPathComponent(AppCore.safeName(id), isDirectory: true).appendingPathComponent(sync.fileName)
    }
}
