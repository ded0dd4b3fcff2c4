@_spi(Testing) import Atoll
import AtollTesting
import Foundation

/// Opens a realm in a fresh temporary folder; the folder goes when the test ends.
final class TestRealm {
    let folder: TemporaryFolder
    var configuration: Realm.Configuration

    /// With `recordingHistory` the realm records its commits' instructions in the file's history,
    /// as a synced realm does (a local realm keeps none).
    init(objectTypes: [ObjectBase.Type] = [Dog.self, Person.self, Address.self, AllTypes.self, Task.self],
         recordingHistory: Bool = false) throws {
        folder = try TemporaryFolder()
        configuration = folder.configuration(objectTypes: objectTypes)
        configuration.recordsHistoryForTesting = recordingHistory
    }

    func open() throws -> Realm { try Realm(configuration: configuration) }

    deinit { folder.remove() }
}

extension TestRealm {
    /// The configuration of this test's file with other object types and migration settings.
    func configuration(
        _ objectTypes: [ObjectBase.Type], schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil
    ) -> Realm.Configuration {
        var configuration = configuration
        configuration.objectTypes = objectTypes
        configuration.schemaVersion = schemaVersion
        configuration.migrationBlock = migrationBlock
        return configuration
    }

    /// The path of this test's realm file.
    var path: String { configuration.fileURL!.path }
}
