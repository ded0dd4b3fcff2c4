import Atoll
import AtollTesting
import Foundation

/// Opens a realm in a fresh temporary folder; the folder goes when the test ends.
final class TestRealm {
    let folder: TemporaryFolder
    var configuration: Realm.Configuration

    init(objectTypes: [ObjectBase.Type] = [Dog.self, Person.self, Address.self, AllTypes.self, Task.self]) throws {
        folder = try TemporaryFolder()
        configuration = folder.configuration(objectTypes: objectTypes)
    }

    func open() throws -> Realm { try Realm(configuration: configuration) }

    deinit { folder.remove() }
}

/// Collects values from `@Sendable` callbacks (migration blocks, other threads).
final class Recorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ value: Value) { lock.withLock { values.append(value) } }

    var all: [Value] { lock.withLock { values } }
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
