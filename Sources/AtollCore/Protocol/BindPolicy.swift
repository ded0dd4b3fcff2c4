import Foundation

/// The server's decisions about a bind and a token refresh, from values: the realm a bind names
/// on the app, and the error each refusal answers with (docs/protocol.md §2.5). Pure; the
/// server's shell (`SyncConnection.bind`) gathers each fact (the app's kind, whether sync is on,
/// the user's read rule, the admission counts, the realm's creation) in that order and ends the
/// session with what this says.
///
/// ```swift
/// switch BindPolicy.realmPath(bind, appKind: .flexible, appID: "tasks") {
/// case .realm(let path): …             // "flx"
/// case .refuse(let refusal): …         // badSyncTarget for a partition bind
/// }
/// ```
package enum BindPolicy {
    /// How an app syncs.
    package enum AppKind: Sendable, Hashable {
        case partition, flexible
    }

    /// What a bind names on an app.
    package enum Target: Sendable, Hashable {
        /// The realm at this path.
        case realm(path: String)
        /// Nothing the app serves: the session ends with this.
        case refuse(ErrorMessage)
    }

    /// A limit of the server's admission (``ServerConfiguration/Limits``) that refused a session.
    package enum Limit: String, Sendable, Hashable, CaseIterable {
        case sessionsPerConnection, sessionsPerUser, connectionsPerUser, realmsPerUser
    }

    /// The path of the realm `bind` names (a partition's path, or ``FlexibleSync/realmPath``), or
    /// `badSyncTarget` when the app syncs the other way. An app whose kind is not configured
    /// (`nil`: development mode decides on first use) takes either.
    package static func realmPath(_ bind: Bind, appKind: AppKind?, appID: String) -> Target {
        switch (bind.target, appKind) {
        case (.partition, .flexible?):
            .refuse(ErrorMessage(code: .badSyncTarget, message: "app \"\(appID)\" uses flexible sync, not partitions", session: bind.session))
        case (.flexible, .partition?):
            .refuse(ErrorMessage(code: .badSyncTarget, message: "app \"\(appID)\" uses partition-based sync, not flexible sync", session: bind.session))
        case (.partition(let partition), _):
            .realm(path: partition.path)
        case (.flexible, _):
            .realm(path: FlexibleSync.realmPath)
        }
    }

    /// An operator terminated the app's sync: the client retries later (after 5 s) and finds
    /// whether it was enabled again.
    package static func syncDisabled(_ bind: Bind, appID: String) -> ErrorMessage {
        ErrorMessage(code: .syncDisabled, message: "sync is not enabled for app \"\(appID)\" (an operator terminated it)",
                     action: .retryLater, tryAgainAfterMilliseconds: 5_000, session: bind.session)
    }

    /// The app's read rule gives `userID` nothing of `partition`.
    package static func partitionNotReadable(_ bind: Bind, partition: PartitionValue, userID: String, appID: String) -> ErrorMessage {
        ErrorMessage(code: .permissionDenied,
                     message: "user \(userID) may not read partition \(partition.path) of app \"\(appID)\" (the app's read rule says no)",
                     session: bind.session)
    }

    /// A session refused by `limit` (of value `value`); `detail` is what the store said, when it
    /// decided. Sessions and connections free up as clients leave (retry after 30 s); realms only
    /// when an operator removes some (retry after an hour).
    package static func refusal(_ limit: Limit, value: Int, userID: String, session: SessionID, detail: String? = nil) -> ErrorMessage {
        let message: String
        let retry: Int64
        switch limit {
        case .sessionsPerConnection:
            (message, retry) = ("too many sessions on one connection (limit \(value))", 30_000)
        case .sessionsPerUser:
            (message, retry) = ("too many sync sessions of user \(userID) across its connections (limit \(value))", 30_000)
        case .connectionsPerUser:
            (message, retry) = ("too many sync connections of user \(userID) (limit \(value))", 30_000)
        case .realmsPerUser:
            (message, retry) = ("\(detail ?? "user \(userID) created \(value) realms") (limits.realmsPerUser)", 3_600_000)
        }
        return ErrorMessage(code: .tryAgainLater, message: message, action: .retryLater, tryAgainAfterMilliseconds: retry, session: session)
    }

    /// A refreshed access token for a bound session: nil takes it; another user's token ends the
    /// session (a client never switches users inside one session).
    package static func refresh(tokenUser: String, sessionUser: String, session: SessionID, epoch: SyncEpoch) -> ErrorMessage? {
        guard tokenUser != sessionUser else { return nil }
        return ErrorMessage(code: .invalidAccessToken, message: "the new access token is another user's", action: .protocolViolation,
                            session: session, epoch: epoch)
    }
}
