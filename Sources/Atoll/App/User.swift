import Foundation

/// One identity of a user: which provider and its id there.
public struct UserIdentity: Sendable, Hashable, Codable {
    public let providerType: String
    public let identifier: String
}

/// What the auth provider knows about a user (the fields App Services' profile has).
public struct UserProfile: Sendable, Hashable {
    public let name: String?
    public let email: String?
    public let pictureURL: String?
    public let firstName: String?
    public let lastName: String?
    public let gender: String?
    public let birthday: String?
    public let minAge: String?
    public let maxAge: String?
    /// Everything the provider reported.
    public let metadata: Document

    init(_ data: [String: String]) {
        name = data["name"]
        email = data["email"]
        pictureURL = data["picture_url"] ?? data["pictureURL"]
        firstName = data["first_name"] ?? data["firstName"]
        lastName = data["last_name"] ?? data["lastName"]
        gender = data["gender"]
        birthday = data["birthday"]
        minAge = data["min_age"] ?? data["minAge"]
        maxAge = data["max_age"] ?? data["maxAge"]
        metadata = data.mapValues { .string($0) }
    }
}

/// A user of an app, logged in on this device (or once logged in and cached).
///
/// ```swift
/// let user = try await app.login(credentials: .anonymous)
/// print(user.id, user.state)
/// try await user.logOut()
/// ```
public final class User: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Whether the user can talk to the server.
    public enum State: Sendable, Hashable {
        case loggedOut, loggedIn, removed

        var name: String {
            switch self {
            case .loggedOut: "LoggedOut"
            case .loggedIn: "LoggedIn"
            case .removed: "Removed"
            }
        }

        init(name: String) {
            self = name == "LoggedIn" ? .loggedIn : name == "Removed" ? .removed : .loggedOut
        }
    }

    public let id: String
    let core: AppCore
    private let lock = NSLock()
    private var _state: State = .loggedOut
    private var _accessToken: String?
    private var _refreshToken: String?
    private var _profile: [String: String] = [:]
    private var _identities: [UserIdentity] = []
    private(set) var provider = ""
    private(set) var lastUsed: Double = 0
    /// One refresh at a time; others wait for its result.
    private var refreshing: _Concurrency.Task<String, Swift.Error>?
    /// Told when the user's state, tokens or profile change (`user.objectWillChange`).
    let changes = ChangeObservers()

    init(id: String, core: AppCore) {
        self.id = id
        self.core = core
    }

    convenience init(record: MetadataStore.UserRecord, core: AppCore) {
        self.init(id: record.id, core: core)
        _state = State(name: record.state)
        _accessToken = record.accessToken
        _refreshToken = record.refreshToken
        provider = record.provider
        _profile = record.profile
        _identities = record.identities.compactMap { d in
            d["provider_type"].flatMap { type in d["id"].map { UserIdentity(providerType: type, identifier: $0) } }
        }
        lastUsed = record.lastUsed
    }

    var record: MetadataStore.UserRecord {
        lock.withLock {
            MetadataStore.UserRecord(id: id, accessToken: _accessToken, refreshToken: _refreshToken, state: _state.name,
                                     provider: provider, profile: _profile,
                                     identities: _identities.map { ["provider_type": $0.providerType, "id": $0.identifier] },
                                     lastUsed: lastUsed)
        }
    }

    public var state: State { lock.withLock { _state } }
    public var isLoggedIn: Bool { state == .loggedIn }
    /// The current short-lived access token (a JWT), refreshed as needed.
    public var accessToken: String? { lock.withLock { _accessToken } }
    public var refreshToken: String? { lock.withLock { _refreshToken } }
    public var profile: UserProfile { UserProfile(lock.withLock { _profile }) }
    public var identities: [UserIdentity] { lock.withLock { _identities } }
    /// The app the user belongs to.
    public var app: App { App(core: core) }

    public var description: String { "User(\(id), \(state))" }
    public static func == (lhs: User, rhs: User) -> Bool { lhs === rhs || (lhs.id == rhs.id && lhs.core === rhs.core) }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    func loggedIn(accessToken: String, refreshToken: String, provider: String, profile: [String: String], identities: [UserIdentity]) {
        lock.withLock {
            _state = .loggedIn
            _accessToken = accessToken
            _refreshToken = refreshToken
            self.provider = provider
            _profile = profile
            _identities = identities
            lastUsed = Date().timeIntervalSince1970
        }
        core.userChanged(self)
        changes.fire()
    }

    func touch() {
        lock.withLock { lastUsed = Date().timeIntervalSince1970 }
        core.metadata?.save(record)
    }

    // MARK: Logging out

    /// Logs the user out: the server revokes the refresh token, the device forgets both tokens.
    /// An anonymous user is removed, as it could never log in again.
    public func logOut() async throws {
        let token = refreshToken
        // Sessions stop here first: the server ends this device's sessions when the token is
        // revoked, and that is no error to report.
        setLoggedOut(removing: isAnonymous)
        if let token {
            // Logging out works offline too; the server's answer does not change the outcome.
            _ = try? await core.http.send("DELETE", "/api/client/v1/auth/session", bearer: token)
        }
    }

    /// Logs out and forgets the user on this device.
    public func remove() async throws {
        try await logOut()
        setLoggedOut(removing: true)
    }

    /// Deletes the user on the server, then removes it from this device.
    public func delete() async throws {
        _ = try await authorized("DELETE", "/api/client/v1/auth/delete")
        setLoggedOut(removing: true)
        removeLocalRealms()
    }

    func setLoggedOut(removing: Bool) {
        lock.withLock {
            _state = removing ? .removed : .loggedOut
            _accessToken = nil
            _refreshToken = nil
        }
        core.syncClient.stopSessions(of: self)
        core.userChanged(self)
        changes.fire()
    }

    // MARK: Tokens

    /// An access token valid for at least a little while, refreshed when needed.
    func validAccessToken(forceRefresh: Bool = false) async throws -> String {
        let (token, state) = lock.withLock { (_accessToken, _state) }
        guard state == .loggedIn else {
            throw AppError.loggedOut("the user \(id) is \(state == .removed ? "removed" : "logged out")")
        }
        if !forceRefresh, let token, let expiry = JWTPayload.expiry(of: token), expiry.timeIntervalSince(core.clock.now()) > 30 {
            return token
        }
        return try await refreshAccessToken()
    }

    struct SessionAnswer: Decodable { let access_token: String }

    /// Trades the refresh token for a new access token. A refused refresh token logs the user out.
    func refreshAccessToken() async throws -> String {
        let task: _Concurrency.Task<String, Swift.Error> = lock.withLock {
            if let refreshing { return refreshing }
            let refreshToken = _refreshToken
            let task = _Concurrency.Task { [core, id] () async throws -> String in
                guard let refreshToken else { throw AppError.loggedOut("the user \(id) has no refresh token") }
                let data = try await core.http.send("POST", "/api/client/v1/auth/session", bearer: refreshToken)
                return try core.http.decode(SessionAnswer.self, from: data, "token refresh").access_token
            }
            refreshing = task
            return task
        }
        do {
            let token = try await task.value
            lock.withLock {
                _accessToken = token
                refreshing = nil
            }
            core.metadata?.save(record)
            changes.fire()
            return token
        } catch let error as AppError where error.isRefusedByServer && [.invalidSession, .userDisabled, .userNotFound].contains(error.code) {
            lock.withLock { refreshing = nil }
            setLoggedOut(removing: false)
            throw error
        } catch {
            lock.withLock { refreshing = nil }
            throw error
        }
    }

    /// A request with the access token, retried once with a fresh token if the server refuses it.
    func authorized(_ method: String, _ path: String, json: [String: String]? = nil, body: Data? = nil) async throws -> Data {
        try await loggingOutOnRefusal {
            let token = try await validAccessToken()
            do {
                return try await core.http.send(method, path, bearer: token, json: json, body: body)
            } catch let error as AppError where error.code == .invalidSession && error.isRefusedByServer {
                return try await core.http.send(method, path, bearer: try await validAccessToken(forceRefresh: true), json: json, body: body)
            }
        }
    }

    /// A request authorized by the refresh token (API key management).
    func withRefreshToken(_ method: String, _ path: String, json: [String: String]? = nil) async throws -> Data {
        guard state == .loggedIn, let token = refreshToken else {
            throw AppError.loggedOut("the user \(id) is not logged in")
        }
        return try await loggingOutOnRefusal {
            do {
                return try await core.http.send(method, path, bearer: token, json: json)
            } catch let error as AppError where error.code == .invalidSession && error.isRefusedByServer {
                setLoggedOut(removing: false)  // the refresh token itself was refused
                throw error
            }
        }
    }

    /// A user the server disabled or no longer knows is logged out on this device.
    private func loggingOutOnRefusal(_ request: () async throws -> Data) async throws -> Data {
        do {
            return try await request()
        } catch let error as AppError where error.code == .userDisabled || error.code == .userNotFound {
            setLoggedOut(removing: false)
            throw error
        }
    }

    /// The user's API keys.
    public var apiKeysAuth: APIKeyAuth { APIKeyAuth(user: self) }
}

extension App {
    convenience init(core: AppCore) {
        self.init(id: core.id, configuration: core.configuration)
    }
}
