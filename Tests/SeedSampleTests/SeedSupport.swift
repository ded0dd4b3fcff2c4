import Atoll
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

/// The email and password `emailPasswordCredentials(app:)` hands out; registered by `withSeedServer`.
let seedEmail = "frodo@example.com"
let seedPassword = "mellon-friend"

func emailPasswordCredentials(app: App) -> Credentials {
    .emailPassword(email: seedEmail, password: seedPassword)
}

/// Runs `body` against a fresh in-process server, with the samples' globals pointing at it.
@MainActor
func withSeedServer(_ body: @MainActor (SyncTestServer) async throws -> Void) async throws {
    try await withSyncTestServer(appId: "seed-app") { server in
        APPID = server.appId
        YOUR_APP_SERVICES_APP_ID = server.appId
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
