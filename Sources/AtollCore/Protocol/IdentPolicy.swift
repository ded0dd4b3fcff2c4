import Foundation

/// What the server knows when a session identifies: read from its store and settings, then
/// handed to ``IdentPolicy/decide(_:facts:now:)``.
package struct IdentFacts: Hashable, Sendable {
    /// A client file the server registered: its salt and when it was last seen.
    package struct KnownFile: Hashable, Sendable {
        package var salt: Int64
        package var lastSeen: Date
        /// The newest server version the client said it had integrated (an ident, an upload's base).
        package var integratedServerVersion: Int64
        package init(salt: Int64, lastSeen: Date, integratedServerVersion: Int64 = 0) {
            self.salt = salt
            self.lastSeen = lastSeen
            self.integratedServerVersion = integratedServerVersion
        }
    }

    package var appID: String
    /// Whether sync is on for the app (an operator may have terminated it since the bind).
    package var syncEnabled: Bool
    /// The realm's epoch now, and why it last changed.
    package var epoch: SyncEpoch
    package var epochReason: ResetReason
    /// The server version the realm's history is compacted through (0: nothing compacted).
    package var compactedThrough: Int64
    package var latestServerVersion: Int64
    /// The client file the ident names, as the realm has it; nil when unknown or not asked.
    package var knownFile: KnownFile?
    /// Whether a client that must reset may recover its unsynced changes.
    package var recoveryAllowed: Bool
    /// How long a client may stay away, in seconds; nil keeps all history.
    package var maxOfflineTime: TimeInterval?

    package init(appID: String, syncEnabled: Bool = true, epoch: SyncEpoch, epochReason: ResetReason = .epochChanged, compactedThrough: Int64 = 0,
                latestServerVersion: Int64, knownFile: KnownFile? = nil, recoveryAllowed: Bool = true, maxOfflineTime: TimeInterval? = nil) {
        self.appID = appID
        self.syncEnabled = syncEnabled
        self.epoch = epoch
        self.epochReason = epochReason
        self.compactedThrough = compactedThrough
        self.latestServerVersion = latestServerVersion
        self.knownFile = knownFile
        self.recoveryAllowed = recoveryAllowed
        self.maxOfflineTime = maxOfflineTime
    }
}

/// What the server does with an ident.
package enum IdentDecision: Hashable, Sendable {
    /// The session goes on from the client's server version; with `assignFile` the server
    /// registers a new client file first (see ``IdentPolicy/clientFilesRefusal(_:facts:detail:)``).
    case accept(assignFile: Bool)
    /// The client must reset: answer with this "reset required" and end the session.
    case reset(ResetRequired)
    /// The session ends with this error.
    case refuse(ErrorMessage)
}

/// The server's answer to an ident, decided from values: no store, no clock (docs/protocol.md §2.6).
///
/// ```swift
/// switch IdentPolicy.decide(ident, facts: facts, now: now()) {
/// case .accept(let assignFile): …
/// case .reset(let reset): send(.resetRequired(reset))
/// case .refuse(let error): send(.error(error))
/// }
/// ```
package enum IdentPolicy {
    package static func decide(_ ident: Ident, facts: IdentFacts, now: Date) -> IdentDecision {
        guard facts.syncEnabled else {
            return .refuse(ErrorMessage(
                code: .syncDisabled, message: "sync is not enabled for app \"\(facts.appID)\" (an operator terminated it)",
                action: .retryLater, tryAgainAfterMilliseconds: 5_000, session: ident.session))
        }
        func reset(_ reason: ResetReason, _ message: String) -> IdentDecision {
            .reset(ResetRequired(session: ident.session, epoch: facts.epoch, reason: reason,
                                 recoveryAllowed: facts.recoveryAllowed, message: message))
        }
        let hasHistory = ident.fileIdent.isAssigned || ident.lastServerVersion > 0
        if ident.epoch != facts.epoch && (ident.epoch != .none || hasHistory) {
            return reset(facts.epochReason, epochMessage(facts, client: ident.epoch))
        }
        if ident.fileIdent.isAssigned {
            guard let known = facts.knownFile, known.salt == ident.fileIdent.salt else {
                return reset(.unknownFileIdent, "the server does not know \(ident.fileIdent) in this realm")
            }
            let away = now.timeIntervalSince(known.lastSeen)
            if let maxOfflineTime = facts.maxOfflineTime, away > maxOfflineTime {
                return reset(.historyCompacted, """
                    the client was last seen \(Int(away)) s ago, longer than the app's maximum offline time \
                    (\(maxOfflineTime) s): the server no longer keeps the history it would need
                    """)
            }
        }
        if hasHistory && ident.lastServerVersion < facts.compactedThrough {
            return reset(.historyCompacted, """
                the client integrated server version \(ident.lastServerVersion); the history up to \
                \(facts.compactedThrough) is compacted
                """)
        }
        if ident.lastServerVersion > facts.latestServerVersion {
            return reset(.historyRestored, """
                the client integrated server version \(ident.lastServerVersion), the history ends at \(facts.latestServerVersion)
                """)
        }
        // A client's integrated version never goes down: one that does lost what it had (a
        // restore from a backup, commits lost in a power loss), perhaps commits it uploaded, and
        // would reuse their client versions for new ones.
        if ident.fileIdent.isAssigned, let known = facts.knownFile, ident.lastServerVersion < known.integratedServerVersion {
            return reset(.historyRestored, """
                the client's copy went back in time: it had integrated server version \(known.integratedServerVersion) \
                and now says \(ident.lastServerVersion) (restored from a backup, or commits lost in a power loss)
                """)
        }
        return .accept(assignFile: !ident.fileIdent.isAssigned)
    }

    /// The error that ends the session when an accepted ident needs a new client file and the
    /// user may not have another (`detail` says which limit): an operator must remove some first.
    package static func clientFilesRefusal(_ ident: Ident, facts: IdentFacts, detail: String) -> ErrorMessage {
        ErrorMessage(
            code: .tryAgainLater, message: "\(detail): an operator must remove some first", action: .retryLater,
            tryAgainAfterMilliseconds: 3_600_000, session: ident.session, epoch: facts.epoch)
    }

    /// Why a client's epoch is not the realm's, as the realm's last epoch change says.
    static func epochMessage(_ facts: IdentFacts, client: SyncEpoch) -> String {
        let why = switch facts.epochReason {
        case .historyRestored: "the server's history was restored from a backup"
        case .breakingSchemaChange: "an operator made a breaking schema change"
        default: "sync was terminated and enabled again"
        }
        return "\(why): the realm's history has \(facts.epoch); the client's copy has \(client)"
    }
}
