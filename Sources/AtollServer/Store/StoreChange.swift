import AtollCore
import Foundation

/// A change one server node made to a store that several nodes share, which the others must act
/// on: new history to fan out to their sessions, caches to drop, sessions to end.
///
/// A store one node has to itself (SQLite) has no feed; the PostgreSQL store carries changes with
/// `LISTEN/NOTIFY` (``PostgresServerStore``). A feed may lose changes (a dropped connection): it
/// then says ``missed`` and the node checks everything it holds against the store.
package enum StoreChange: Sendable, Hashable {
    /// Uploads were integrated into a realm's history, now at `latestServerVersion`. `entries` are
    /// the entries appended, when they fit in the notification (a few kilobytes): the receivers
    /// fan them out without reading them back; otherwise empty, and they read the table.
    ///
    /// `epoch` is the history's epoch the entries belong to (nil from a node that did not say):
    /// an announcement travels apart from its commit, so it may arrive after the history was
    /// replaced, and is then ignored.
    case history(realmID: Int64, latestServerVersion: Int64, entries: [HistoryEntry] = [], epoch: SyncEpoch? = nil)
    /// A realm's history was replaced under a new epoch (restore, breaking schema change): its
    /// sessions must reset.
    case historyReplaced(realmID: Int64)
    /// Sync was terminated for an app: its sessions end, its realms start over.
    case syncTerminated(appID: String)
    /// An app's runtime settings changed (sync enabled, client recovery, maximum offline time).
    case appChanged(appID: String)
    /// The configuration of an app added while the server runs was kept (created or replaced):
    /// the other nodes read it from the store and serve it, ending the app's sessions.
    case runtimeAppChanged(appID: String)
    /// A user's sessions end (disabled, deleted, logged out on `deviceID`, or on every device when nil).
    case sessionsEnded(userID: String, deviceID: String?, reason: String)
    /// The feed was interrupted: changes may have been lost.
    case missed

    /// The most bytes of a payload line: a NOTIFY payload is at most 8,000 bytes, and the MAC
    /// (43), the node's id (36) and the time (13) go first.
    static let maxPayloadBytes = 7_800

    /// The change as one line: reasons are cut short, appended entries left out when they do not
    /// fit (``maxPayloadBytes``).
    var payload: String {
        switch self {
        case .history(let realm, let version, let entries, let epoch):
            Self.historyLine(realmID: realm, epoch: epoch, latestServerVersion: version,
                             encoded: entries.map { ($0.serverVersion, $0.encoded) })
        case .historyReplaced(let realm): "r\t\(realm)"
        case .syncTerminated(let app): "t\t\(app)"
        case .appChanged(let app): "a\t\(app)"
        case .runtimeAppChanged(let app): "c\t\(app)"
        case .sessionsEnded(let user, let device, let reason):
            "u\t\(user)\t\(device ?? "")\t\(reason.prefix(1_000).replacingOccurrences(of: "\t", with: " "))"
        case .missed: "m"
        }
    }

    /// `H realm epoch version [version:base64,…]` (`h realm version […]` without an epoch) for
    /// entries already encoded as stored (an integration has them so and need not encode them
    /// again), the entries only when the line stays within ``maxPayloadBytes``.
    static func historyLine(realmID: Int64, epoch: SyncEpoch?, latestServerVersion: Int64,
                            encoded: [(serverVersion: Int64, changeset: Data)]) -> String {
        let line = if let epoch { "H\t\(realmID)\t\(epoch.rawValue)\t\(latestServerVersion)" } else { "h\t\(realmID)\t\(latestServerVersion)" }
        guard !encoded.isEmpty else { return line }
        var field = ""
        for (version, data) in encoded {
            if !field.isEmpty { field += "," }
            field += "\(version):\(data.base64EncodedString())"
            if line.utf8.count + 1 + field.utf8.count > maxPayloadBytes { return line }
        }
        return line + "\t" + field
    }

    /// The change a ``payload`` line describes, or nil for a line this version does not know.
    init?(payload: Substring) {
        let fields = payload.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("h", 3), ("h", 4):
            guard let realm = Int64(fields[1]), let version = Int64(fields[2]) else { return nil }
            // Entries that do not read back are left out: the receivers read the table instead.
            let entries = fields.count == 4 ? Self.entries(fields[3]) ?? [] : []
            self = .history(realmID: realm, latestServerVersion: version, entries: entries)
        case ("H", 4), ("H", 5):
            guard let realm = Int64(fields[1]), let epoch = UInt64(fields[2]), let version = Int64(fields[3]) else { return nil }
            let entries = fields.count == 5 ? Self.entries(fields[4]) ?? [] : []
            self = .history(realmID: realm, latestServerVersion: version, entries: entries, epoch: SyncEpoch(rawValue: epoch))
        case ("r", 2):
            guard let realm = Int64(fields[1]) else { return nil }
            self = .historyReplaced(realmID: realm)
        case ("t", 2): self = .syncTerminated(appID: fields[1])
        case ("a", 2): self = .appChanged(appID: fields[1])
        case ("c", 2): self = .runtimeAppChanged(appID: fields[1])
        case ("u", 4): self = .sessionsEnded(userID: fields[1], deviceID: fields[2].isEmpty ? nil : fields[2], reason: fields[3])
        case ("m", 1): self = .missed
        default: return nil
        }
    }

    /// `version:base64,…` in increasing versions, or nil.
    private static func entries(_ field: String) -> [HistoryEntry]? {
        var entries: [HistoryEntry] = []
        for item in field.split(separator: ",") {
            let parts = item.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let version = Int64(parts[0]), version > (entries.last?.serverVersion ?? 0),
                  let data = Data(base64Encoded: String(parts[1])),
                  let entry = try? HistoryEntry.stored(serverVersion: version, data)
            else { return nil }
            entries.append(entry)
        }
        return entries
    }
}

extension ServerStore {
    /// Tells the other nodes on this store of `change` (nothing for a store no other node uses).
    package func publish(_ change: StoreChange) async throws {}
    /// The changes other nodes make, for as long as the stream is iterated; nil for a store no
    /// other node uses.
    package func changesFromOtherNodes(servedBy interest: RealmInterest?) -> AsyncStream<StoreChange>? { nil }
    /// Every change other nodes make (history of every realm included).
    package func changesFromOtherNodes() -> AsyncStream<StoreChange>? { changesFromOtherNodes(servedBy: nil) }
}
