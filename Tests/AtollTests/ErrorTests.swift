@_spi(Testing) import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

final class TwoPrimaryKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}

final class LinksToAnUnknownType: Object {
    @Persisted var name = ""
    @Persisted var target: UnknownTarget?
}

/// Linked to, but declares the name of a type that does not exist in the schema.
final class UnknownTarget: Object {
    override class func className() -> String { "Not A Valid Name" }
    @Persisted var name = ""
}

final class FloatKey: Object {
    @Persisted(primaryKey: true) var key: Float = 0
}

/// Each test causes one `Realm.Error` code and matches it, as an app would in `catch`.
@Suite struct ErrorTests {
    private func openError(_ configuration: Realm.Configuration) throws -> Realm.Error {
        try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
    }

    @Test func everyAtollErrorReadsAsItsMessageThroughLocalizedDescription() {
        let errors: [(any Error, String)] = [
            (AppError(.invalidPassword, "invalid username/password"), "invalid username/password"),
            (Realm.Error(.fileNotFound, "no file at /x"), "no file at /x"),
            (SyncError(.clientSessionError, "the server went away"), "the server went away"),
        ]
        for (error, message) in errors {
            #expect(error.localizedDescription == message)
            #expect((error as NSError).localizedDescription == message)
        }
        #expect((AppError(.userNotFound, "x") as NSError).domain == "io.realm.app")
        #expect((AppError(.userNotFound, "x") as NSError).code == AppError.Code.userNotFound.rawValue)
        do {
            _ = try QueryExpression.parse("name == ")
            Issue.record("the query parsed")
        } catch {
            #expect(error.localizedDescription.contains("line 1, column"))
            #expect(!error.localizedDescription.contains("operation could not be completed"))
        }
    }

    @Test func errorsAreMatchableByCodeInCatch() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        do {
            try realm.commitWrite()
            Issue.record("commitWrite without beginWrite succeeded")
        } catch let error as Realm.Error where error.code == .notInWriteTransaction {
            #expect(error.description.contains("notInWriteTransaction"))
        }
    }

    @Test func fileAccessForAPathThatCannotBeCreated() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let blocker = folder.url.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: blocker)
        // A folder cannot be created under a regular file, even by root.
        let configuration = Realm.Configuration(fileURL: blocker.appendingPathComponent("sub/test.realm"), objectTypes: [Dog.self])
        let error = try openError(configuration)
        #expect(error.code == .fileAccess)
        #expect(error.message.contains("plain-file"))
    }

    @Test func fileAccessWhenTheFileIsAFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = Realm.Configuration(fileURL: folder.url, objectTypes: [Dog.self])
        let error = try openError(configuration)
        #expect(error.code == .fileAccess)
    }

    @Test(.enabled(if: getuid() != 0, "root reads every file"))
    func filePermissionDeniedForAnUnreadableFile() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do { _ = try t.open() }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: t.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: t.path) }
        let error = try openError(t.configuration)
        #expect(error.code == .filePermissionDenied)
    }

    @Test func invalidDatabaseForAGarbageFile() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        try Data(repeating: 0x5A, count: 8192).write(to: t.configuration.fileURL!)
        let error = try openError(t.configuration)
        #expect(error.code == .invalidDatabase)
        #expect(try Data(contentsOf: t.configuration.fileURL!) == Data(repeating: 0x5A, count: 8192), "the file was not touched")
    }

    @Test func invalidDatabaseForAnSQLiteFileThatIsNotARealm() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        try RawSQLite.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')", path: t.path)
        let error = try openError(t.configuration)
        #expect(error.code == .invalidDatabase)
        #expect(try RawSQLite.fetch("SELECT body FROM notes", path: t.path) == [["keep me"]])
        #expect(try RawSQLite.fetch("SELECT count(*) FROM sqlite_master WHERE name LIKE '%atoll%'", path: t.path) == [["0"]])
    }

    @Test func invalidDatabaseForARealmWhoseStoredSchemaIsDamaged() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do { _ = try t.open() }
        try RawSQLite.execute("UPDATE _atoll_meta SET value = '{not json' WHERE key = 'schema'", path: t.path)
        let error = try openError(t.configuration)
        #expect(error.code == .invalidDatabase)
    }

    @Test func schemaMismatchForAnObjectOfATypeOutsideTheConfiguration() throws {
        let t = try TestRealm(objectTypes: [Task.self])
        let realm = try t.open()
        let error = try #require(throws: Realm.Error.self) { try realm.write { realm.add(Dog()) } }
        #expect(error.code == .schemaMismatch)
    }

    @Test func schemaMismatchForAReadOnlyFileMissingAProperty() throws {
        let t = try TestRealm()
        do { _ = try Realm(configuration: t.configuration([MemberV1.self])) }
        var configuration = t.configuration([MemberWithExtras.self])
        configuration.readOnly = true
        let error = try openError(configuration)
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Member.email"))
    }

    @Test func schemaMismatchForARemovedPropertyWithoutVersionBump() throws {
        let t = try TestRealm()
        do { _ = try Realm(configuration: t.configuration([MemberV1.self])) }
        let error = try openError(t.configuration([MemberWithoutLastName.self]))
        #expect(error.code == .schemaMismatch)
    }

    @Test func failForALowerSchemaVersion() throws {
        let t = try TestRealm()
        do { _ = try Realm(configuration: t.configuration([MemberV1.self], schemaVersion: 2)) }
        let error = try openError(t.configuration([MemberV1.self], schemaVersion: 1))
        #expect(error.code == .fail)
        #expect(error.message == "Provided schema version 1 is less than last set version 2.")
    }

    @Test func alreadyInWriteTransactionForANestedWrite() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        realm.beginWrite()
        defer { realm.cancelWrite() }
        let error = try #require(throws: Realm.Error.self) { try realm.write {} }
        #expect(error.code == .alreadyInWriteTransaction)
        #expect(realm.isInWriteTransaction, "the first transaction is still open")
    }

    @Test func notInWriteTransactionForCommitWithoutBegin() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        let error = try #require(throws: Realm.Error.self) { try realm.commitWrite() }
        #expect(error.code == .notInWriteTransaction)
    }

    @Test func readOnlyForAWriteOnAReadOnlyRealm() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do { _ = try t.open() }
        var configuration = t.configuration
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        let error = try #require(throws: Realm.Error.self) { try realm.write {} }
        #expect(error.code == .readOnly)
    }

    @Test func readOnlyForAWriteOnAFrozenRealm() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let frozen = try t.open().freeze()
        let error = try #require(throws: Realm.Error.self) { try frozen.write {} }
        #expect(error.code == .readOnly)
    }

    @Test func wrongThreadForAWriteFromAnotherThread() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        let box = UncheckedBox(realm)
        let result = Recorder<Realm.Error.Code?>()
        let thread = Thread {
            do { try box.value.write {}; result.append(nil) } catch let error as Realm.Error { result.append(error.code) } catch { result.append(nil) }
        }
        thread.start()
        while !thread.isFinished { usleep(1000) }
        #expect(result.all == [.wrongThread])
        #expect(!realm.isInWriteTransaction)
    }

    @Test func invalidQueryForAQueryThatDoesNotParseOrFit() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        let syntax = try #require(throws: Realm.Error.self) { _ = try realm.objects(Dog.self).filter(query: "name ==") }
        #expect(syntax.code == .invalidQuery)
        let unknown = try #require(throws: Realm.Error.self) { _ = try realm.objects(Dog.self).filter(query: "colour == 'red'") }
        #expect(unknown.code == .invalidQuery)
        #expect(unknown.message.contains("colour"))
    }

    @Test func createIgnoresKeysThatNameNoPropertyAsRealmDoes() throws {
        // Realm reads a dictionary by the schema's names: JSON with more keys imports.
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        try realm.write { realm.create(Dog.self, value: ["name": "Rex", "nmae": "typo"]) }
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
    }

    @Test func primaryKeyExistsForADuplicateAdd() throws {
        let t = try TestRealm(objectTypes: [Person.self])
        let realm = try t.open()
        try realm.write { realm.add(Person(value: ["name": "Ann"])) }
        let error = try #require(throws: Realm.Error.self) { try realm.write { realm.add(Person(value: ["name": "Ann"])) } }
        #expect(error.code == .primaryKeyExists)
        #expect(error.message.contains("Ann"))
    }

    @Test func fileExistsForAWriteCopyOntoAnExistingFile() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        let destination = t.folder.url.appendingPathComponent("taken.realm")
        try Data("precious".utf8).write(to: destination)
        let error = try #require(throws: Realm.Error.self) {
            try realm.writeCopy(configuration: Realm.Configuration(fileURL: destination))
        }
        #expect(error.code == .fileExists)
        #expect(try Data(contentsOf: destination) == Data("precious".utf8))
        let selfCopy = try #require(throws: Realm.Error.self) { try realm.writeCopy(configuration: t.configuration) }
        #expect(selfCopy.code == .fileExists)
    }

    @Test func invalidSchemaForTwoPrimaryKeys() throws {
        let t = try TestRealm(objectTypes: [TwoPrimaryKeys.self])
        let error = try openError(t.configuration)
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("TwoPrimaryKeys") && error.message.contains("primary key"))
        #expect(!FileManager.default.fileExists(atPath: t.path), "no file is made for an invalid schema")
    }

    @Test func invalidSchemaForALinkToATypeWithAnInvalidName() throws {
        let t = try TestRealm(objectTypes: [LinksToAnUnknownType.self])
        let error = try openError(t.configuration)
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("Not A Valid Name"))
    }

    @Test func invalidSchemaForAPrimaryKeyOfAnUnsupportedType() throws {
        let t = try TestRealm(objectTypes: [FloatKey.self])
        let error = try openError(t.configuration)
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("FloatKey.key"))
    }

    @Test func processSurvivesEveryErrorAndTheRealmStaysUsable() throws {
        let t = try TestRealm(objectTypes: [Person.self])
        let realm = try t.open()
        try realm.write { realm.add(Person(value: ["name": "Ann"])) }
        #expect(throws: Realm.Error.self) { try realm.write { realm.add(Person(value: ["name": "Ann"])) } }
        #expect(throws: Realm.Error.self) { try realm.commitWrite() }
        #expect(throws: Realm.Error.self) { _ = try realm.objects(Person.self).filter(query: "((") }
        try realm.write { realm.add(Person(value: ["name": "Bob"])) }
        #expect(realm.objects(Person.self).count == 2)
    }
}

/// Hands a non-Sendable value to another thread on purpose (to provoke a wrong-thread error).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
