import AtollCore
import Foundation

/// A client of one app on an Atoll server: logs users in and keeps them.
///
/// ```swift
/// let app = App(id: "tasks")                     // the server at http://localhost:9090
/// let user = try await app.login(credentials: .anonymous)
/// ```
/// `App(id:)` with the same id and configuration returns an app sharing the same state, as
/// Realm's cached apps do.
public final class App: Sendable, Equatable, CustomStringConvertible {
    let core: AppCore

    /// The app's id on the server.
    public var appId: String { core.id }
    /// The app's configuration; its `baseURL` is the address in use (``baseUrl``): the default when
    /// none was set, as Realm reports its own, and the new one after ``updateBaseUrl(to:)``.
    public var configuration: AppConfiguration {
        var configuration = core.configuration
        configuration.baseURL = baseUrl
        return configuration
    }

    public convenience init(id: String) {
        self.init(id: id, configuration: AppConfiguration())
    }

    public init(id: String, configuration: AppConfiguration) {
        core = AppCore.shared(id: id, configuration: configuration)
    }

    /// Tests only: an app whose sync sessions and token checks read `clock` (reconnect delays,
    /// timeouts, token expiry), so a test moves time instead of sleeping. The clock is taken when
    /// the app's state is first made for this id and configuration.
    package init(id: String, configuration: AppConfiguration, clock: WallClock) {
        core = AppCore.shared(id: id, configuration: configuration, clock: clock)
    }

    private init(core: AppCore, _: Void) { self.core = core }

    /// The app as a new process would open it: state read afresh from its folder.
    @_spi(Testing)
    public static func reopenedForTesting(id: String, configuration: AppConfiguration) -> App {
        App(core: AppCore.shared(id: id, configuration: configuration, fresh: true), ())
    }

    public static func == (lhs: App, rhs: App) -> Bool { lhs.core === rhs.core }

    public var description: String { "App(\(appId) at \(baseUrl))" }

    // MARK: Users

    /// The user most recently logged in or switched to, if still logged in.
    public var currentUser: User? { core.currentUser }

    /// Every user logged in on this device (and those logged out but not removed), by id.
    public var allUsers: [String: User] { core.allUsers }

    /// Makes `user` the current user.
    public func `switch`(to user: User) {
        precondition(user.state == .loggedIn, "Only a logged-in user can become the current user")
        core.makeCurrent(user)
    }

    /// Logs a user in.
    public func login(credentials: Credentials) async throws -> User {
        try await core.login(credentials)
    }

    /// Logs a user in and calls `completion` with the user or the error.
    public func login(credentials: Credentials, _ completion: @escaping @Sendable (Result<User, Swift.Error>) -> Void) {
        let core = core
        _Concurrency.Task {
            do { completion(.success(try await core.login(credentials))) } catch { completion(.failure(error)) }
        }
    }

    /// Email/password registration.
    public var emailPasswordAuth: EmailPasswordAuth { EmailPasswordAuth(core: core) }
}

/// The state one app id and configuration share in the process.
final class AppCore: @unchecked Sendable {
    let id: String
    let configuration: AppConfiguration
    /// What sessions, connections and token checks read the time from.
    let clock: WallClock
    let http: HTTPClient
    let folder: URL
    let metadata: MetadataStore?
    let syncClient: SyncClient
    let syncManager: SyncManager
    private let lock = NSLock()
    private var users: [String: User] = [:]
    private var currentId: String?
    /// Told when a user logs in, out, is removed or becomes the current one (`app.objectWillChange`).
    let changes = ChangeObservers()

    private static let cores = Locked<[String: AppCore]>([:])

    /// Every app made in this process (`@AsyncOpen` without an app id takes the only one).
    static var all: [AppCore] { cores.withLock { Array($0.values) } }

    static func shared(id: String, configuration: AppConfiguration, clock: WallClock = .system, fresh: Bool = false) -> AppCore {
        // The trusted roots are part of the sync connection, so they make another app.
        let key = "\(id)|\(configuration.resolvedBaseURL)|\(configuration.resolvedRoot.path)|\(configuration.trustedRootCertificates.hashValue)"
        return cores.withLock { cores in
            if !fresh, let core = cores[key] { return core }
            let core = AppCore(id: id, configuration: configuration, clock: clock)
            cores[key] = core
            return core
        }
    }

    private init(id: String, configuration: AppConfiguration, clock: WallClock) {
        self.id = id
        self.configuration = configuration
        self.clock = clock
        let settings = RequestSettings()
        http = HTTPClient(configuration: configuration, settings: settings)
        syncClient = SyncClient(
            baseURL: configuration.resolvedBaseURL, appId: id, trustedRootCertificates: configuration.trustedRootCertificates,
            timeouts: (configuration.syncTimeouts ?? SyncTimeoutOptions()).snapshot, settings: settings, clock: clock)
        folder = configuration.resolvedRoot.appendingPathComponent("atoll", isDirectory: true)
            .appendingPathComponent(Self.safeName(id), isDirectory: true)
        metadata = try? MetadataStore(folder: folder.appendingPathComponent("metadata", isDirectory: true))
        syncManager = SyncManager(metadata: metadata, settings: settings, timeouts: configuration.syncTimeouts,
                                  connection: syncClient.connection)
        // What sync errors left to do with realm files (client resets, permission errors), as
        // Realm does at app start: files still open in this process wait for the next start.
        syncManager.runPendingFileActions()
        // Users cached by earlier runs: the app works offline with them.
        for record in metadata?.users() ?? [] where record.state != User.State.removed.name {
            users[record.id] = User(record: record, core: self)
        }
        currentId = metadata?.currentUserId
    }

    static func safeName(_ id: String) -> String {
        String(id.unicodeScalars.map { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) ? Character($0) : "_" })
    }

    var currentUser: User? {
        lock.withLock {
            if let currentId, let user = users[currentId], user.state == .loggedIn { return user }
            return users.values.filter { $0.state == .loggedIn }.max { $0.lastUsed < $1.lastUsed }
        }
    }

    var allUsers: [String: User] {
        lock.withLock { users.filter { $0.value.state != .removed } }
    }

    func makeCurrent(_ user: User) {
        user.touch()
        lock.withLock { currentId = user.id }
        metadata?.currentUserId = user.id
        changes.fire()
    }

    struct LoginAnswer: Decodable {
        let access_token: String
        let refresh_token: String
        let user_id: String
    }

    struct ProfileAnswer: Decodable {
        struct Identity: Decodable {
            let id: String
            let provider_type: String
        }
        let user_id: String
        let identities: [Identity]

        /// The profile's `data` in `body` (the profile answer): a string as it is, anything else (a
        /// custom JWT's metadata field may be a number, a list …) as its JSON text.
        static func data(in body: Data) -> [String: String] {
            guard let root = try? JSONNode.parse(body), case .object(let members)? = root["data"] else { return [:] }
            var out: [String: String] = [:]
            for (key, value) in members {
                if case .string(let s) = value { out[key] = s } else { out[key] = value.text }
            }
            return out
        }
    }

    func login(_ credentials: Credentials) async throws -> User {
        if case .anonymous = credentials,
           let anonymous = lock.withLock({ users.values.first { $0.state == .loggedIn && $0.isAnonymous } }) {
            makeCurrent(anonymous)
            return anonymous
        }
        let path = "/api/client/v1/app/\(id)/auth/providers/\(credentials.provider)/login"
        let answer = try http.decode(LoginAnswer.self, from: try await http.send("POST", path, body: try credentials.requestBody()), "login")
        let profileData = try await http.send("GET", "/api/client/v1/auth/profile", bearer: answer.access_token)
        let profile = try http.decode(ProfileAnswer.self, from: profileData, "profile")
        let user: User = lock.withLock {
            if let existing = users[answer.user_id] { return existing }
            let user = User(id: answer.user_id, core: self)
            users[answer.user_id] = user
            return user
        }
        user.loggedIn(accessToken: answer.access_token, refreshToken: answer.refresh_token, provider: credentials.provider,
                      profile: ProfileAnswer.data(in: profileData),
                      identities: profile.identities.map { UserIdentity(providerType: $0.provider_type, identifier: $0.id) })
        makeCurrent(user)
        return user
    }

    /// Called when a user logs out or is removed: the current user moves to another logged-in one.
    func userChanged(_ user: User) {
        if user.state == .removed {
            lock.withLock { _ = users.removeValue(forKey: user.id) }
            metadata?.deleteUser(user.id)
        } else {
            metadata?.save(user.record)
        }
        let current: String? = lock.withLock {
            if currentId == user.id, user.state != .loggedIn {
                currentId = users.values.filter { $0.state == .loggedIn }.max { $0.lastUsed < $1.lastUsed }?.id
            }
            return currentId
        }
        metadata?.currentUserId = current
        changes.fire()
    }
}

/// Registers and manages email/password identities.
public struct EmailPasswordAuth: Sendable {
    let core: AppCore

    /// Registers a new email identity; log in with `.emailPassword(email:password:)` afterwards.
    public func registerUser(email: String, password: String) async throws {
        _ = try await core.http.send("POST", "/api/client/v1/app/\(core.id)/auth/providers/local-userpass/register",
                                     json: ["email": email, "password": password])
    }

    public func registerUser(email: String, password: String, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            do { try await registerUser(email: email, password: password); completion(nil) } catch { completion(error) }
        }
    }
}
