import AtollCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Remote data access (docs/protocol.md §1.6): `user.mongoClient("mongodb-atlas")` calls,
/// served over the app's flexible-sync data with the app's rules applied as for sync. Each
/// request is bounded: its body (``RemoteLimits``), the objects it examines and writes, its time
/// (``timeout``) and the requests one user has in flight (``maxInFlightPerUser``).
struct RemoteRoutes: Sendable {
    let coordinator: SyncCoordinator
    let auth: AuthService
    var limits = RemoteLimits()
    var timeout: Duration = .seconds(10)
    var maxInFlightPerUser = 4
    /// Change streams one user may have open at once.
    var maxWatchesPerUser = 4
    /// How often a change stream looks for new history, and sends a keep-alive comment.
    var watchInterval: Duration = .milliseconds(250)
    var keepAliveInterval: Duration = .seconds(2)
    var customAuthorization: HTTPField.Name? = nil
    let inFlight = Locked<[String: Int]>([:])
    var logger = Logger(label: "atoll-server.remote")

    func add(to router: Router<AtollRequestContext>) {
        router.post("api/client/v1/app/:app/mongodb/:action") { request, context in
            do {
                return try await handle(request, context)
            } catch let error as RemoteError {
                return try Self.response(error)
            }
        }
    }

    func handle(_ request: Request, _ context: AtollRequestContext) async throws -> Response {
        let appID = try context.parameters.require("app")
        let action = try context.parameters.require("action")
        let token = try AuthRoutes(auth: auth, customAuthorization: customAuthorization).bearer(request)
        let user: RuleUser
        switch await auth.syncUser(accessToken: token, appID: appID, session: 0) {
        case .user(let found, _, _, let customData): user = RuleUser(found, customData: customData)
        case .refused(let refusal): throw ServerError(.invalidToken, refusal.message)
        }
        _ = try await auth.app(appID)  // refuses an unknown app (outside development mode)
        // One reading: the settings and their generation, so a write decided under them is not
        // integrated once the app is replaced.
        let (app, generation) = auth.apps.current(appID)
        guard app.remoteAccess.enabled else { throw RemoteError(.collectionNotFound, "app \"\(appID)\" does not serve remote data access") }
        guard app.syncKind != .partition else {
            throw RemoteError(.unsupported, "remote data access serves flexible-sync apps; app \"\(appID)\" is partition-based")
        }
        guard enter(user.id, limit: maxInFlightPerUser) else {
            throw ServerError(.tooManyRequests, "more than \(maxInFlightPerUser) remote data access requests of one user at once", retryAfter: 1)
        }
        defer { leave(user.id) }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limits.maxRequestBytes)
        } catch {
            throw RemoteError(.limitExceeded, "the body has more than \(limits.maxRequestBytes) bytes")
        }
        let remote = try RemoteRequest(action: action, body: body.readableBytesView, limits: limits)
        guard remote.service == app.remoteAccess.service, remote.database == app.remoteDatabase else {
            throw RemoteError(.collectionNotFound, "app \"\(appID)\" has no database \(remote.database.prefix(60)) in service \(remote.service.prefix(60))")
        }
        guard let (realm, version, state) = try await coordinator.remoteSnapshot(appID: appID) else {
            throw RemoteError(.collectionNotFound, "app \"\(appID)\" has no synced data yet")
        }
        let roles = app.rules(for: user)
        let rules = app.flexibleRules(roles, user: user)
        if remote.action == .watch {
            return try watch(remote, realm: realm, version: version, state: state, rules: rules, user: user.id)
        }
        let writeRule = SyncConnection.flexibleWriteRule(roles, user: user)
        let limits = limits
        let (answer, write) = try await withTimeLimit(timeout) {
            let collection = try RemoteCollection(state: state, type: remote.collection, rules: rules, limits: limits)
            return try collection.perform(remote, rule: writeRule)
        }
        if let write, !write.instructions.isEmpty {
            let refused: [CompensatingWrite]
            do {
                refused = try await coordinator.integrateRemoteWrite(
                    write.instructions, into: realm, check: writeRule,
                    stillCurrent: { [apps = auth.apps] in apps.generation(of: appID) == generation })
            } catch is StaleEpoch {
                throw RemoteError(.permissionDenied, "the app's rules (or the realm's history) changed while the write ran: nothing was written; try again")
            }
            if let first = refused.first {
                throw RemoteError(.permissionDenied, "a concurrent change made the write refused: \(first.reason)")
            }
        }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: answer.text)))
    }

    /// Runs `work` off the caller's task, cancelled after `limit` (the engine checks for it).
    private func withTimeLimit<T: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try work() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw RemoteError(.limitExceeded, "the request took longer than \(limit)")
            }
            return value
        }
    }

    private func enter(_ user: String, limit: Int) -> Bool {
        inFlight.withLock { counts in
            guard counts[user, default: 0] < limit else { return false }
            counts[user, default: 0] += 1
            return true
        }
    }

    private func leave(_ user: String) {
        inFlight.withLock { counts in
            counts[user, default: 1] -= 1
            if counts[user] == 0 { counts[user] = nil }
        }
    }

    /// A change stream: server-sent events (`text/event-stream`), one `data:` line of a change
    /// event's canonical Extended JSON each, and a comment line as keep-alive. The user's roles
    /// are chosen when it opens (as a sync session's are when it binds); it ends when the client
    /// goes away.
    private func watch(_ remote: RemoteRequest, realm: StoredRealm, version: Int64, state: ReplicaState,
                       rules: FlexibleSync.Rules, user: String) throws -> Response {
        let limits = limits
        // Checked now, so a bad request is answered with its error rather than an empty stream.
        let watch = try RemoteWatch(matchFilter: remote.body["filter"], ids: remote.body["ids"],
                                    in: RemoteCollection(state: state, type: remote.collection, rules: rules, limits: limits))
        let key = "watch " + user
        guard enter(key, limit: maxWatchesPerUser) else {
            throw ServerError(.tooManyRequests, "more than \(maxWatchesPerUser) change streams of one user at once", retryAfter: 5)
        }
        let (coordinator, interval, keepAlive, logger) = (coordinator, watchInterval, keepAliveInterval, logger)
        let body = ResponseBody { writer in
            defer { leave(key) }
            var current = (version: version, state: state)
            var quiet = Duration.zero
            try await writer.write(ByteBuffer(string: ": open\n\n"))
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                quiet += interval
                do {
                    // Entry by entry, so each change is its own event (as a change stream has it).
                    var text = ""
                    for entry in try await coordinator.remoteHistory(of: realm, after: current.version) {
                        var next = current.state
                        next.apply(entry.changeset)
                        let touched = Set(entry.changeset.instructions.compactMap(\.object).filter { $0.type == remote.collection }.map(\.primaryKey))
                        if !touched.isEmpty {
                            let before = try RemoteCollection(state: current.state, type: remote.collection, rules: rules, limits: limits)
                            let after = try RemoteCollection(state: next, type: remote.collection, rules: rules, limits: limits)
                            for event in try watch.events(from: before, to: after, database: remote.database, version: entry.serverVersion, touched: touched) {
                                text += "data: \(event.text)\n\n"
                            }
                        }
                        current = (entry.serverVersion, next)
                    }
                    if !text.isEmpty {
                        try await writer.write(ByteBuffer(string: text))
                        quiet = .zero
                    }
                } catch let error as RemoteError {
                    try await writer.write(ByteBuffer(string: "event: error\ndata: \(Self.errorBody(error).text)\n\n"))
                    break
                }
                if quiet >= keepAlive {
                    // Also how a stream whose client went away finds out: the write fails.
                    try await writer.write(ByteBuffer(string: ":\n\n"))
                    quiet = .zero
                }
            }
            logger.debug("change stream ended", metadata: ["user": "\(user)"])
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    static func errorBody(_ error: RemoteError) -> JSONNode {
        .object([("error", .string(error.message)), ("error_code", .string("MongoDBError")), ("remote_code", .string(error.code.rawValue))])
    }

    /// The answer to a refused request: `{"error", "error_code": "MongoDBError", "remote_code"}`.
    static func response(_ error: RemoteError) throws -> Response {
        let status: HTTPResponse.Status = switch error.code {
        case .badRequest, .unsupported, .invalidDocument: .badRequest
        case .collectionNotFound: .notFound
        case .permissionDenied: .forbidden
        case .limitExceeded: .contentTooLarge
        case .duplicateKey: .conflict
        }
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: errorBody(error).text)))
    }
}
