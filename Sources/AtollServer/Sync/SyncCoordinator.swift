import AtollAppConfig
import AtollCore
import Foundation
import Logging

/// Why a client may not make the change of one object (nil: it may); see ``WriteCheck/Rule``.
package typealias WriteRule = @Sendable (_ id: ObjectID, _ before: [String: Value]?, _ after: [String: Value]?, _ state: ReplicaState) -> String?

/// One identified sync session, as operators see it.
package struct SessionInfo: Sendable, Hashable {
    package var appID: String
    package var userID: String
    /// The realm: a partition's path, or `flx` for flexible sync.
    package var path: String
    package var fileIdent: Int64
    package var connection: UInt64
    package var session: SessionID
    package var epoch: SyncEpoch
}

/// A session the coordinator can end from outside its connection.
struct BoundSession: Sendable {
    var info: SessionInfo
    /// The device (login) whose access token bound the session; nil for tokens without one.
    var deviceID: String?
    var end: @Sendable (ErrorMessage) -> Void
    /// Ends the session with "reset required" (its realm's history was restored or rewritten).
    var reset: @Sendable (ResetRequired) -> Void
}

/// New entries of a realm's history, as fanned out to the sessions bound to it.
struct HistoryAdvance: Sendable {
    var realmID: Int64
    /// In server-version order.
    var entries: [HistoryEntry]
    var latestServerVersion: Int64
}

/// The server's sync state shared by every connection: realms (created on first bind), the
/// integration of uploads into their history, and the fan-out of new history to bound sessions.
///
/// Integration goes through ``ServerStore/integrate(realmID:fileIdent:baseServerVersion:_:)``, one
/// transaction per upload, with `ServerIntegrator` deciding what to append; so a re-sent upload is
/// applied once even when two connections race.
///
/// ```swift
/// let coordinator = SyncCoordinator(store: store, metrics: metrics, logger: logger)
/// let realm = try await coordinator.realm(appID: "tasks", path: PartitionValue.string("home").path)
/// let result = try await coordinator.integrate(batch, into: realm)
/// ```
package actor SyncCoordinator {
    package let store: any ServerStore
    /// What one value or collection of an upload may cost (`ReplicaState.validate`).
    let limits = ChangesetLimits()
    let metrics: ServerMetrics
    let logger: Logger
    /// The configured settings of an app (client recovery, maximum offline time), which the store's
    /// operator overrides take precedence over.
    let appSettings: @Sendable (String) -> ServerConfiguration.App
    /// The server's wall clock (tests pass one they move): last-seen times, compaction, backups.
    package nonisolated let clock: WallClock
    /// Flexible-sync query sets evaluated once per distinct set and version, for every session.
    nonisolated let evaluations: FlexibleEvaluations

    struct RealmKey: Hashable {
        var appID: String
        var path: String
    }

    struct SubscriberKey: Hashable {
        var connection: UInt64
        var session: SessionID
    }

    var realms: [RealmKey: StoredRealm] = [:]
    /// Uploads being integrated, by app: an app's replacement waits for those started before it.
    var uploadsInFlight: [String: Int] = [:]
    var subscribers: [Int64: [SubscriberKey: @Sendable (HistoryAdvance) -> Void]] = [:]
    /// Identified sessions, for operators (listing, ending them).
    var bound: [SubscriberKey: BoundSession] = [:]
    /// Whether sync is on, per app (read from the store once).
    var syncEnabled: [String: Bool] = [:]
    /// Apps as the store has them (operator overrides), read once and kept up to date.
    var storedApps: [String: StoredApp] = [:]
    private var nextConnectionID: UInt64 = 1
    /// Apps whose sync is being terminated (a count: terminations may overlap).
    private var terminating: [String: Int] = [:]
    /// Where a test holds the coordinator (``NoInterleaving`` in production).
    let interleaving: any SyncInterleaving
    /// Uploads whose early rebase no longer fitted the history found under the lock (rebased again).
    var rebasedAgain = 0

    var materialized: [Int64: MaterializedRealm] = [:]
    /// The realms with sessions or a materialized state here: the store's change listener drops
    /// other realms' announcements unread (``noteServed(_:)`` keeps it after each change of
    /// ``subscribers`` or ``materialized``).
    package nonisolated let interest: RealmInterest
    /// Per realm with sessions here: the newest server version fanned out to them, by an
    /// integration here or a read of what another node appended (``otherNodeAppended(realmID:latest:)``).
    var fannedOut: [Int64: Int64] = [:]
    /// Realms whose entries appended by another node are being read for the sessions here, with
    /// the newest version announced meanwhile.
    var announcedReads: [Int64: Int64] = [:]

    var schemas: [Int64: TrackedSchema] = [:]
    /// Loads of materialized realms under way.
    var loads: [Int64: _Concurrency.Task<Void, any Error>] = [:]
    /// The realms whose state or schema is cached, by recency of use (a counter, not a clock).
    var recency: [Int64: UInt64] = [:]
    var tick: UInt64 = 0
    /// How many realms' states and schemas stay cached (``ServerConfiguration/Limits/cachedRealms``).
    let cachedRealms: Int
    /// The auth service's cache of live logins: what another node revoked is forgotten here.
    let liveLogins: LiveLoginCache?

    package init(store: any ServerStore, metrics: ServerMetrics, logger: Logger, cachedRealms: Int = 256,
                appSettings: @escaping @Sendable (String) -> ServerConfiguration.App = { ServerConfiguration.App(id: $0) },
                clock: WallClock = .system) {
        self.init(store: store, metrics: metrics, logger: logger, cachedRealms: cachedRealms, appSettings: appSettings, clock: clock,
                  liveLogins: nil)
    }

    init(store: any ServerStore, metrics: ServerMetrics, logger: Logger, cachedRealms: Int,
         appSettings: @escaping @Sendable (String) -> ServerConfiguration.App, clock: WallClock, liveLogins: LiveLoginCache?,
         interleaving: any SyncInterleaving = NoInterleaving()) {
        self.liveLogins = liveLogins
        self.interleaving = interleaving
        self.store = store
        interest = RealmInterest(record: { metrics.countHistoryAnnouncement($0) })
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.cachedRealms = max(1, cachedRealms)
        self.appSettings = appSettings
        evaluations = FlexibleEvaluations(counter: { metrics.queryEvaluations.increment() })
    }

    /// The time now, by ``clock``.
    nonisolated func now() -> Date { clock.now() }

    /// A number that tells one connection's subscriptions from another's.
    func newConnectionID() -> UInt64 {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }

    /// The realm of `appID` at `path`, created with a random epoch on first use, by `user` (who may
    /// create at most `maxPerUser` realms of the app: `ServerStoreError.limitExceeded` past it).
    package func realm(appID: String, path: String, createdBy user: String? = nil, maxPerUser: Int? = nil) async throws -> StoredRealm {
        let key = RealmKey(appID: appID, path: path)
        if let known = realms[key] {
            touch(known.id)
            return known
        }
        let realm = try await store.realm(appID: appID, path: path, creatingWith: Self.randomEpoch(), now: now(),
                                          creator: user, maxPerCreator: maxPerUser)
        // While an app's history is being restarted the store may still hand out the old epoch:
        // nothing is cached until it is done.
        guard terminating[appID, default: 0] == 0 else { return realm }
        realms[key] = realm
        touch(realm.id)
        return realm
    }

    /// Delivers every later change of `realmID` to `deliver` until ``unsubscribe(connection:session:)``;
    /// `bound` describes the session to operators and ends it when they ask.
    func subscribe(realmID: Int64, connection: UInt64, session: SessionID, bound info: BoundSession? = nil,
                   _ deliver: @escaping @Sendable (HistoryAdvance) -> Void) {
        let key = SubscriberKey(connection: connection, session: session)
        subscribers[realmID, default: [:]][key] = deliver
        if let info { bound[key] = info }
        noteServed(realmID)
    }

    /// Tells the change listener whether `realmID` is served here now. Called as soon as a realm
    /// gains its first session or materialized state, before its history is read for them: an
    /// announcement dropped before that was of a commit that read sees.
    func noteServed(_ realmID: Int64) {
        interest.set(realmID, served: subscribers[realmID] != nil || materialized[realmID] != nil)
    }

    /// A bound session's token was refreshed, possibly for another device of the same user.
    func rebound(connection: UInt64, session: SessionID, deviceID: String?) {
        bound[SubscriberKey(connection: connection, session: session)]?.deviceID = deviceID
    }

    func unsubscribe(realmID: Int64, connection: UInt64, session: SessionID) {
        forget(SubscriberKey(connection: connection, session: session), of: realmID)
    }

    /// Stops delivering to a subscriber and forgets its bound session.
    func forget(_ key: SubscriberKey, of realmID: Int64) {
        subscribers[realmID]?[key] = nil
        bound[key] = nil
        if subscribers[realmID]?.isEmpty == true {
            subscribers[realmID] = nil
            fannedOut[realmID] = nil
            noteServed(realmID)
        }
    }

    // MARK: Operations

    /// The identified sessions of an app, oldest connection first.
    package func sessions(appID: String) -> [SessionInfo] {
        bound.filter { $0.value.info.appID == appID }
            .sorted { ($0.key.connection, $0.key.session) < ($1.key.connection, $1.key.session) }
            .map(\.value.info)
    }

    /// Whether sync is on for an app (on for an app the store does not know yet).
    package func isSyncEnabled(appID: String) async throws -> Bool {
        if let known = syncEnabled[appID] { return known }
        let enabled = try await store.app(id: appID)?.syncEnabled ?? true
        syncEnabled[appID] = enabled
        return enabled
    }

    /// Terminates sync for an app: ends its sessions, refuses new binds until
    /// ``enableSync(appID:)``, and starts every realm's history over under a new epoch from a
    /// snapshot of its data: the data stays, every client's sync state is forgotten, and a client
    /// that comes back holds an epoch the server no longer has and must reset.
    package func terminateSync(appID: String) async throws {
        guard try await store.setSyncEnabled(appID: appID, false) else { throw ServerStoreError(.missingOwner, "no app \(appID)") }
        syncEnabled[appID] = false
        terminating[appID, default: 0] += 1
        defer { terminating[appID]! -= 1 }
        endAndForgetSessions(ofApp: appID)
        try await store.publish(.syncTerminated(appID: appID))
        await interleaving.whileTerminating(appID: appID)
        for realm in try await store.realms(appID: appID) {
            let state = try await currentState(of: realm.id)
            try await store.restartHistory(realmID: realm.id, epoch: Self.randomEpoch(), reason: .epochChanged,
                                           snapshot: Self.snapshot(of: state, timestamp: timestamp()))
        }
        // A session that identified while the histories restarted (its bind came before sync was
        // off) holds an epoch that is gone: end it too, and forget what was read meanwhile.
        endAndForgetSessions(ofApp: appID)
        try await store.publish(.syncTerminated(appID: appID))
        logger.notice("sync terminated", metadata: ["app": "\(appID)"])
    }

    /// Ends the bound sessions of an app with "sync disabled" and drops its cached realms.
    func endAndForgetSessions(ofApp appID: String) {
        end(sessionsWhere: { $0.info.appID == appID }) { info in
            ErrorMessage(code: .syncDisabled, message: "sync was terminated for app \"\(appID)\"", action: .retryLater,
                         tryAgainAfterMilliseconds: 5_000, session: info.session, epoch: info.epoch)
        }
        for (key, realm) in realms where key.appID == appID {
            realms[key] = nil
            materialized[realm.id] = nil
            schemas[realm.id] = nil
            subscribers[realm.id] = nil
            fannedOut[realm.id] = nil
            recency[realm.id] = nil
            noteServed(realm.id)
        }
    }

    /// Turns sync on again after ``terminateSync(appID:)``; realms start over with new epochs.
    package func enableSync(appID: String) async throws {
        guard try await store.setSyncEnabled(appID: appID, true) else { throw ServerStoreError(.missingOwner, "no app \(appID)") }
        syncEnabled[appID] = true
        try await store.publish(.appChanged(appID: appID))
        logger.notice("sync enabled", metadata: ["app": "\(appID)"])
    }

    /// Ends the sessions of a user who was disabled or deleted, or logged out on `deviceID` (nil:
    /// on every device): the client logs the user out.
    package func endSessions(userID: String, deviceID: String? = nil, reason: String) async {
        endSessionsHere(userID: userID, deviceID: deviceID, reason: reason)
        do {
            try await store.publish(.sessionsEnded(userID: userID, deviceID: deviceID, reason: reason))
        } catch {
            logger.error("could not tell the other nodes to end a user's sessions", metadata: ["user": "\(userID)", "error": "\(error)"])
        }
    }

    /// Ends the user's sessions bound to this node.
    func endSessionsHere(userID: String, deviceID: String?, reason: String) {
        liveLogins?.forget(userID: userID, deviceID: deviceID)
        end(sessionsWhere: { $0.info.userID == userID && (deviceID == nil || $0.deviceID == deviceID) }) { info in
            ErrorMessage(code: .userLoggedOut, message: reason, session: info.session, epoch: info.epoch)
        }
    }

    func end(sessionsWhere match: (BoundSession) -> Bool, _ error: (SessionInfo) -> ErrorMessage) {
        for (key, session) in bound where match(session) {
            session.end(error(session.info))
            bound[key] = nil
        }
    }

    /// The number of sessions subscribed to a realm (for tests and metrics).
    func subscriberCount(realmID: Int64) -> Int { subscribers[realmID]?.count ?? 0 }

    /// A random non-zero epoch (0 means "none yet" on the wire).
    static func randomEpoch() -> SyncEpoch {
        SyncEpoch(rawValue: UInt64.random(in: 1...UInt64.max))
    }
}
