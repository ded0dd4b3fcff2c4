import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing

// What the seed pages' samples take for granted: their app id, a global `app`, their models
// and a few helpers of the documentation's own test suite. The samples themselves are copied
// with only `import Atoll` and the server URL (`App(id:)` gets the test server's configuration)
// changed.

/// The test server's app id and client configuration, set by `withSeedServer`.
nonisolated(unsafe) var APPID = "seed-app"
nonisolated(unsafe) var YOUR_APP_SERVICES_APP_ID = "seed-app"
nonisolated(unsafe) var seedAppConfiguration = AppConfiguration()
nonisolated(unsafe) var app: App = App(id: "seed-app-unset")

/// The app id under the name the error-handling pages use.
nonisolated(unsafe) var APP_ID = "seed-app"

/// Where seed 000's before-reset block writes its copy of the realm.
nonisolated(unsafe) var myRecoveryPath = FileManager.default.temporaryDirectory.appendingPathComponent("seed-recovery-\(UUID().uuidString).realm")

/// The email and password `emailPasswordCredentials(app:)` hands out; registered by `withSeedServer`.
let seedEmail = "frodo@example.com"
let seedPassword = "mellon-friend"

func emailPasswordCredentials(app: App) -> Credentials {
    .emailPassword(email: seedEmail, password: seedPassword)
}

/// Runs `body` against a fresh in-process server, with the samples' globals pointing at it.
/// The globals are shared by every seed suite, so one body runs at a time (suites of different
/// files otherwise run in parallel).
@MainActor
func withSeedServer(_ body: @MainActor (SyncTestServer) async throws -> Void) async throws {
    await SeedGate.shared.enter()
    do {
        try await withSeedServerUnlocked(body)
    } catch {
        await SeedGate.shared.leave()
        throw error
    }
    await SeedGate.shared.leave()
}

/// Lets one `withSeedServer` body in at a time, in arrival order.
actor SeedGate {
    static let shared = SeedGate()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

@MainActor
private func withSeedServerUnlocked(_ body: @MainActor (SyncTestServer) async throws -> Void) async throws {
    try await withSyncTestServer(appId: "seed-app") { server in
        APPID = server.appId
        YOUR_APP_SERVICES_APP_ID = server.appId
        APP_ID = server.appId
        seedAppConfiguration = server.appConfiguration(device: "seed")
        app = App(id: APPID, configuration: seedAppConfiguration)
        try await app.emailPasswordAuth.registerUser(email: seedEmail, password: seedPassword)
        try await body(server)
    }
}

/// The documentation's tests use XCTest; these record the same checks in Swift Testing.
func XCTAssertEqual<T: Equatable>(_ a: T, _ b: T, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(a == b, sourceLocation: sourceLocation)
}

// MARK: Models of the seed pages

final class Task: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var taskName = ""
    @Persisted var assignee: String?
    @Persisted var completed = false
    @Persisted var progressMinutes = 0
}

final class Team: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var teamName = ""
    @Persisted var tasks: List<Task>
    @Persisted var members: List<String>
}

final class QsTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner: String?
    @Persisted var status = ""
}

final class Todo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var owner = ""
    @Persisted var status = ""
}

final class FlexibleSync_Task: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var taskName = ""
    @Persisted var assignee: String?
    @Persisted var completed = false
    @Persisted var progressMinutes = 0
}

final class FlexibleSync_Team: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var teamName = ""
    @Persisted var tasks: List<FlexibleSync_Task>
    @Persisted var members: List<String>
}

// MARK: Client resets

/// What the pages' "test client reset handling" steps do: terminate sync on the server and enable
/// it again; the session, reconnected until `done()` says the reset arrived (bounded, ~10 s each),
/// gets a client reset. `whileTerminated` runs while the realm is offline.
@MainActor
func terminateAndEnableSync(_ server: SyncTestServer, session: SyncSession,
                            whileTerminated: () throws -> Void = {}, until done: () -> Bool) async throws {
    #expect(try await forceClientReset(server, session: session, whileTerminated: whileTerminated, until: done), "no client reset arrived")
}

/// Collects errors handed to a handler on any thread.
final class SeedErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [SyncError] = []
    func append(_ error: any Error) { if let error = error as? SyncError { lock.withLock { errors.append(error) } } }
    var all: [SyncError] { lock.withLock { errors } }
    var firstReset: SyncError? { all.first { $0.code == .clientResetError } }
}

/// The realms in the app's recovery folder (`<root>/atoll/<app>/recovered-realms`).
func recoveredRealms() -> [String] {
    let folder = seedAppConfiguration.rootDirectory!.appendingPathComponent("atoll/\(APPID)/recovered-realms")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasSuffix(".realm") }.map { folder.appendingPathComponent($0).path }
}
