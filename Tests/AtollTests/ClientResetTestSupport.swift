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
