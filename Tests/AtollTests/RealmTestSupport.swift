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
