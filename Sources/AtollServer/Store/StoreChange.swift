import AtollCore
import Foundation

/// A change one server node made to a store that several nodes share, which the others must act
/// on: new history to fan out to their sessions, caches to drop, sessions to end.
///
/// A store one node has to itself (SQLite) has no feed; the PostgreSQL store carries changes with
/// `LISTEN/NOTIFY` (``PostgresServerStore``). A feed may lose changes (a dropped connection): it
/// then says ``missed`` and the node checks everything it holds against the store.
public enum StoreChange: Sendable, Hashable {
    /// Uploads were integrated into a realm's history, now at `latestServerVersion`.
    case history(realmID: Int64, latestServerVersion: Int64)
    /// A realm's history was replaced under a new epoch (restore, breaking schema change): its
    /// sessions must reset.
    case historyReplaced(realmID: Int64)
    /// Sync was terminated for an app: its sessions end, its realms start over.
    case syncTerminated(appID: String)
    /// An app's runtime settings changed (sync enabled, client recovery, maximum offline time).
    case appChanged(appID: String)
    /// A user's sessions end (disabled, deleted, logged out on `deviceID`, or on every device when nil).
    case sessionsEnded(userID: String, deviceID: String?, reason: String)
    /// The feed was interrupted: changes may have been lost.
    case missed

    /// The change as one line (a NOTIFY payload is at most 8,000 bytes: reasons are cut short).
    var payload: String {
        switch self {
        case .history(let realm, let version): "h\t\(realm)\t\(version)"
        case .historyReplaced(let realm): "r\t\(realm)"
        case .syncTerminated(let app): "t\t\(app)"
        case .appChanged(let app): "a\t\(app)"
        case .sessionsEnded(let user, let device, let reason):
            "u\t\(user)\t\(device ?? "")\t\(reason.prefix(1_000).replacingOccurrences(of: "\t", with: " "))"
        case .missed: "m"
        }
    }

    /// The change a ``payload`` line describes, or nil for a line this version does not know.
    init?(payload: Substring) {
        let fields = payload.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("h", 3):
            guard let realm = Int64(fields[1]), let version = Int64(fields[2]) else { return nil }
            self = .history(realmID: realm, latestServerVersion: version)
        case ("r", 2):
            guard let realm = Int64(fields[1]) else { return nil }
            self = .historyReplaced(realmID: realm)
        case ("t", 2): self = .syncTerminated(appID: fields[1])
        case ("a", 2): self = .appChanged(appID: fields[1])
        case ("u", 4): self = .sessionsEnded(userID: fields[1], deviceID: fields[2].isEmpty ? nil : fields[2], reason: fields[3])
        case ("m", 1): self = .missed
        default: return nil
        }
    }
}

extension ServerStore {
    /// Tells the other nodes on this store of `change` (nothing for a store no other node uses).
    public func publish(_ change: StoreChange) async throws {}
    /// The changes other nodes make, for as long as the stream is iterated; nil for a store no
    /// other node uses.
    public func changesFromOtherNodes() -> AsyncStream<StoreChange>? { nil }
}
