@_spi(Testing) import Atoll
import AtollTesting
import Foundation

/// The names of a synced realm's tasks, sorted, after catching up with the newest commit.
@MainActor func names(_ realm: Realm) -> [String] {
    realm.refresh()
    return realm.objects(SyncedTask.self).map(\.name).sorted()
}

/// The client reset errors (`SyncError.clientResetError`) among `errors`.
func resetErrors(_ errors: Recorder<any Error>) -> [SyncError] {
    errors.all.compactMap { $0 as? SyncError }.filter { $0.code == .clientResetError }
}

extension User {
    /// A synced realm of partition "shire" holding `SyncedTask`, opened after downloading.
    @MainActor func openShire(_ mode: ClientResetMode) async throws -> Realm {
        var configuration = configuration(partitionValue: "shire", clientResetMode: mode)
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    }
}

extension SyncTestServer {
    /// Device `device` logged in, every sync error it reports recorded, and its realm of
    /// partition "shire" (holding `SyncedTask`) open after downloading.
    @MainActor func shireDevice(_ device: String, mode: ClientResetMode = .recoverUnsyncedChanges())
        async throws -> (realm: Realm, errors: Recorder<any Error>)
    {
        let app = app(device: device)
        let errors = Recorder<any Error>()
        app.syncManager.errorHandler = { error, _ in errors.append(error) }
        let realm = try await app.login(credentials: .anonymous).openShire(mode)
        return (realm, errors)
    }
}
