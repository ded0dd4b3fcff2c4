import Atoll
import AtollTesting
import Foundation
import Testing

// Seed 004 (the reference of `RLMClientResetMode`): which handler gets a manual client reset.
// The page has no Swift sample beyond the declarations.

@MainActor @Suite(.serialized) struct Seed004ClientResetTests {
    /// Opens the partition "myPartition" with `mode`, syncs a write and forces a client reset,
    /// waiting until `arrived()` says the handler under test got it.
    private func reset(_ server: SyncTestServer, mode: ClientResetMode, until arrived: (SyncSession) -> Bool) async throws -> SyncSession {
        let user = try await app.login(credentials: .anonymous)
        var configuration = user.configuration(partitionValue: "myPartition", clientResetMode: mode)
        configuration.objectTypes = [QsTask.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
        try realm.write { realm.add(QsTask(value: ["name": "Pack", "owner": "Sam"])) }
        let session = realm.syncSession!
        try await session.wait(for: .upload)
        try await terminateAndEnableSync(server, session: session) { arrived(session) }
        return session
    }

    /// "If an error reporting block is set in `.manualClientResetHandler` and the
    /// `RLMSyncManager.errorHandler`, the `.manualClientResetHandler` block will be executed."
    /// "The `RLMSyncManager.errorHandler` is still invoked under all `RLMSyncError`s other than
    /// `RLMSyncErrorClientResetError`."
    @Test func withBothHandlersTheManualHandlerRuns() async throws {
        try await withSeedServer { server in
            let managerErrors = SeedErrors()
            let manualErrors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in managerErrors.append(error) }
            let session = try await reset(server, mode: .manual(errorHandler: { error, _ in manualErrors.append(error) })) { _ in
                manualErrors.firstReset != nil
            }
            #expect(manualErrors.firstReset?.clientResetInfo() != nil)
            #expect(managerErrors.firstReset == nil)
            #expect(managerErrors.all.contains { $0.code == .serverWarning })
            #expect(session.state == .inactive)
        }
    }

    /// "If an error reporting block is set in either … but not both, the single block will execute."
    @Test func withOnlyTheSyncManagersHandlerItRuns() async throws {
        try await withSeedServer { server in
            let managerErrors = SeedErrors()
            app.syncManager.errorHandler = { error, _ in managerErrors.append(error) }
            _ = try await reset(server, mode: .manual()) { _ in managerErrors.firstReset != nil }
            let (path, _) = try #require(managerErrors.firstReset?.clientResetInfo())
            #expect(path.contains("/recovered-realms/"))
            #expect(path.hasSuffix(".realm"))
        }
    }

    @Test func withOnlyTheManualHandlerItRuns() async throws {
        try await withSeedServer { server in
            let manualErrors = SeedErrors()
            _ = try await reset(server, mode: .manual(errorHandler: { error, _ in manualErrors.append(error) })) { _ in
                manualErrors.firstReset != nil
            }
            #expect(manualErrors.firstReset != nil)
        }
    }

    /// "If no block is set in either location, the client reset will not be handled": the session
    /// stops and the reset waits for the next app start.
    @Test func withNoHandlerTheResetIsNotHandled() async throws {
        try await withSeedServer { server in
            let session = try await reset(server, mode: .manual()) { $0.state == .inactive }
            #expect(session.state == .inactive)
            #expect(recoveredRealms().isEmpty)
        }
    }
}
