import Atoll
import AtollTesting
import Foundation
import Testing

/// The realm file as a whole: whether it exists, deleting it, seeding it, compacting it and
/// copying it.
@Suite struct RealmFilesTests {
    private static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self]

    private func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    private func leftovers(_ path: String) -> [String] {
        ["", "-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: path + $0) }
    }

    // MARK: fileExists(for:)

    @Test func fileExistsOnceTheRealmWasOpened() throws {
        let t = try TestRealm(objectTypes: Self.types)
        #expect(!Realm.fileExists(for: t.configuration))
        do { _ = try t.open() }
        #expect(Realm.fileExists(for: t.configuration))
        try Realm.deleteFiles(for: t.configuration)
        #expect(!Realm.fileExists(for: t.configuration))
    }

    @Test func anInMemoryRealmHasNoFile() throws {
        let configuration = Realm.Configuration(inMemoryIdentifier: "files-\(UUID().uuidString)", objectTypes: Self.types)
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        #expect(!Realm.fileExists(for: configuration))
        #expect(try !Realm.deleteFiles(for: configuration))
        #expect(realm.objects(Dog.self).count == 1, "the open in-memory realm is untouched")
    }

    // MARK: deleteFiles(for:)

    @Test func deleteFilesRemovesTheFileAndEverythingSQLiteKeptBesideIt() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try t.open()
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            #expect(leftovers(t.path).contains("-wal"), "an open realm has its log beside it")
        }
        #expect(try Realm.deleteFiles(for: t.configuration))
        #expect(leftovers(t.path).isEmpty)
        #expect(try !Realm.deleteFiles(for: t.configuration), "nothing left to delete")
        #expect(try t.open().isEmpty, "the next open starts an empty realm")
    }

    @Test func deleteFilesOfARealmOpenInThisProcessIsAlreadyOpen() throws {
        let t = try TestRealm(objectTypes: Self.types)
        var frozen: Realm?
        do {
            let realm = try t.open()
            var caught = false
            do {
                try Realm.deleteFiles(for: t.configuration)
            } catch Realm.Error.alreadyOpen {
                caught = true
            }
            #expect(caught)
            frozen = realm.freeze()
        }
        let error = try #require(throws: Realm.Error.self) { try Realm.deleteFiles(for: t.configuration) }
        #expect(error.code == .alreadyOpen, "a frozen realm keeps the file open")
        #expect(error.fileURL?.lastPathComponent == "test.realm")
        #expect(Realm.fileExists(for: t.configuration))
        frozen = nil
        #expect(try Realm.deleteFiles(for: t.configuration))
        _ = frozen
    }

    @Test func deleteFilesOfARealmOpenInAnotherProcessIsAlreadyOpen() async throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try t.open()
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let path = t.path
        // The child process has no realm of the file open; this process has.
        await #expect(processExitsWith: .success) { [path = path as String] in
            let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path))
            do {
                try Realm.deleteFiles(for: configuration)
            } catch Realm.Error.alreadyOpen {
                exit(FileManager.default.fileExists(atPath: path) ? 0 : 2)
            }
            exit(1)
        }
        withExtendedLifetime(realm) {}
        #expect(FileManager.default.fileExists(atPath: path))
    }

    // MARK: seedFilePath

    /// A seed realm with two people and a dog, made as an app's build step would.
    private func makeSeed(in folder: TemporaryFolder) throws -> URL {
        let seed = folder.url.appendingPathComponent("seed.realm")
        let builder = try Realm(configuration: folder.configuration("builder.realm", objectTypes: Self.types))
        try builder.write {
            let ann = Person(value: ["name": "Ann", "age": 30])
            ann.dogs.append(Dog(value: ["name": "Rex"]))
            builder.add(ann)
            builder.add(Person(value: ["name": "Bob", "age": 40]))
        }
        try builder.writeCopy(toFile: seed)
        return seed
    }

    @Test func theSeedIsCopiedWhenTheRealmFileDoesNotExist() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let seed = try makeSeed(in: folder)
        let seedBytes = try Data(contentsOf: seed)
        var configuration = Realm.Configuration(fileURL: folder.url.appendingPathComponent("app/default.realm"),
                                                objectTypes: Self.types, seedFilePath: seed)
        do {
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(Person.self).map(\.name).sorted() == ["Ann", "Bob"])
            #expect(realm.object(ofType: Person.self, forPrimaryKey: "Ann")?.dogs.first?.name == "Rex")
            try realm.write { realm.delete(realm.objects(Person.self).where { $0.name == "Bob" }) }
        }
        #expect(try Data(contentsOf: seed) == seedBytes, "the seed itself is never written")
        // The file exists now: the seed is not copied again.
        configuration.seedFilePath = seed
        #expect(try Realm(configuration: configuration).objects(Person.self).map(\.name) == ["Ann"])
    }

    @Test func theSeedIsIgnoredWhenTheRealmFileExists() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let seed = try makeSeed(in: folder)
        var configuration = folder.configuration("existing.realm", objectTypes: Self.types)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Person(value: ["name": "Cid"])) }
        }
        configuration.seedFilePath = seed
        #expect(try Realm(configuration: configuration).objects(Person.self).map(\.name) == ["Cid"])
    }

    @Test func aMissingSeedFileIsFileNotFound() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration("seeded.realm", objectTypes: Self.types)
        configuration.seedFilePath = folder.url.appendingPathComponent("no-such-seed.realm")
        let error = try #require(throws: Realm.Error.self) { try Realm(configuration: configuration) }
        #expect(error.code == .fileNotFound)
        #expect(error.fileURL?.lastPathComponent == "no-such-seed.realm")
        #expect(!Realm.fileExists(for: configuration), "no realm file is left behind")
    }

    @Test func aSeedThatIsNotARealmIsInvalidDatabase() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let seed = folder.url.appendingPathComponent("notes.txt")
        try Data(String(repeating: "not a realm ", count: 500).utf8).write(to: seed)
        var configuration = folder.configuration("seeded.realm", objectTypes: Self.types)
        configuration.seedFilePath = seed
        let error = try #require(throws: Realm.Error.self) { try Realm(configuration: configuration) }
        #expect(error.code == .invalidDatabase)
    }

    @Test func seedFilePathAndInMemoryIdentifierExcludeEachOther() {
        var configuration = Realm.Configuration(inMemoryIdentifier: "cache")
        configuration.seedFilePath = URL(fileURLWithPath: "/tmp/seed.realm")
        #expect(configuration.inMemoryIdentifier == nil)
        configuration.inMemoryIdentifier = "cache"
        #expect(configuration.seedFilePath == nil)
        let viaInit = Realm.Configuration(fileURL: URL(fileURLWithPath: "/tmp/a.realm"), seedFilePath: URL(fileURLWithPath: "/tmp/seed.realm"))
        #expect(viaInit.seedFilePath?.lastPathComponent == "seed.realm" && viaInit.fileURL?.lastPathComponent == "a.realm")
    }

    // MARK: shouldCompactOnLaunch

    /// A realm that held many large objects and then lost most of them: about half free pages
    /// (the other half is the history of the writes that made them).
    private func makeSparseRealm(_ t: TestRealm) throws {
        let realm = try t.open()
        let filler = String(repeating: "x", count: 2_000)
        try realm.write {
            for i in 0..<2_000 { realm.add(Dog(value: ["name": "dog \(i) \(filler)"])) }
            let ann = Person(value: ["name": "Ann", "age": 30])
            ann.dogs.append(Dog(value: ["name": "Rex"]))
            for tag in ["c", "a", "b"] { ann.tags.insert(tag) }
            realm.add(ann)
        }
        try realm.write { realm.delete(realm.objects(Dog.self).where { $0.name != "Rex" }) }
    }

    @Test func shouldCompactOnLaunchGetsTheSizesAndCompactsWhenItSaysSo() throws {
        let t = try TestRealm(objectTypes: Self.types)
        try makeSparseRealm(t)
        let before = fileSize(t.path)
        let asked = Recorder<[Int]>()
        t.configuration.shouldCompactOnLaunch = { total, used in
            asked.append([total, used])
            return true
        }
        let realm = try t.open()
        let sizes = try #require(asked.all.first)
        #expect(asked.all.count == 1)
        #expect(sizes[0] >= 4_000_000 && sizes[0] <= before, "the total counts the free space")
        // The deleted objects' rows are free (a local realm keeps no history of the writes).
        #expect(sizes[1] < sizes[0] * 3 / 5)
        #expect(fileSize(t.path) <= sizes[1] + 64 * 1024, "the file shrank to what its data uses")
        // Objects, links and the order of a set's elements are kept.
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(ann.dogs.map(\.name) == ["Rex"])
        #expect(Array(ann.tags) == ["c", "a", "b"])
        #expect(realm.objects(Dog.self).count == 1)
        try realm.write { realm.add(Dog(value: ["name": "Fido", "owner": ann])) }
        #expect(ann.dogs.count == 1 && realm.objects(Dog.self).count == 2)
    }

    @Test func compactShrinksAnOpenRealmsFileAndKeepsItsObjects() throws {
        let t = try TestRealm(objectTypes: Self.types)
        try makeSparseRealm(t)
        let realm = try t.open()
        let before = fileSize(t.path)
        #expect(try realm.compact())
        #expect(fileSize(t.path) < before * 3 / 5, "the free pages are gone")
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(ann.dogs.map(\.name) == ["Rex"] && Array(ann.tags) == ["c", "a", "b"])

        // With another realm of the file open (its snapshot keeps the log), both read on.
        let other = try t.open()
        #expect(try realm.compact())
        #expect(other.objects(Dog.self).count == 1)
        try other.write { other.add(Dog(value: ["name": "Fido"])) }
        realm.refresh()
        #expect(realm.objects(Dog.self).count == 2 && ann.dogs.count == 1)
        realm.beginWrite()
        #expect(try !realm.compact(), "not inside a write transaction")
        realm.cancelWrite()
        #expect(try !realm.freeze().compact())
    }

    @Test func shouldCompactOnLaunchReturningFalseLeavesTheFileAsItIs() throws {
        let t = try TestRealm(objectTypes: Self.types)
        try makeSparseRealm(t)
        let before = fileSize(t.path)
        let asked = Recorder<Bool>()
        t.configuration.shouldCompactOnLaunch = { _, _ in
            asked.append(true)
            return false
        }
        let realm = try t.open()
        #expect(asked.all == [true])
        #expect(fileSize(t.path) >= before)
        #expect(realm.objects(Person.self).count == 1)
    }

    @Test func shouldCompactOnLaunchIsAskedOnlyWhenNoRealmOfTheFileIsOpen() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let asked = Recorder<Bool>()
        t.configuration.shouldCompactOnLaunch = { _, _ in
            asked.append(true)
            return false
        }
        do {
            let first = try t.open()
            _ = try t.open()
            _ = try t.open()
            withExtendedLifetime(first) {}
        }
        #expect(asked.all.count == 0, "a new file has nothing to compact")
        do {
            let first = try t.open()
            _ = try t.open()
            withExtendedLifetime(first) {}
        }
        #expect(asked.all.count == 1, "asked once, when the file was opened first")
        do { _ = try t.open() }
        #expect(asked.all.count == 2, "asked again once every realm of it was closed")
    }

    @Test func aReadOnlyRealmIsNeverCompacted() throws {
        let t = try TestRealm(objectTypes: Self.types)
        try makeSparseRealm(t)
        let asked = Recorder<Bool>()
        t.configuration.readOnly = true
        t.configuration.shouldCompactOnLaunch = { _, _ in
            asked.append(true)
            return true
        }
        #expect(try t.open().objects(Person.self).count == 1)
        #expect(asked.all.isEmpty)
    }

    // MARK: writeCopy(toFile:)

    @Test func writeCopyToFileWritesACompactedRealmThatOpensAsIs() throws {
        let t = try TestRealm(objectTypes: Self.types)
        try makeSparseRealm(t)
        let realm = try t.open()
        let copy = t.folder.url.appendingPathComponent("backup.realm")
        try realm.writeCopy(toFile: copy)
        #expect(fileSize(copy.path) < fileSize(t.path) * 3 / 5, "the free space is left out")
        #expect(leftovers(copy.path) == [""], "one file, nothing beside it")
        let opened = try Realm(configuration: Realm.Configuration(fileURL: copy, objectTypes: Self.types))
        #expect(opened.object(ofType: Person.self, forPrimaryKey: "Ann")?.dogs.map(\.name) == ["Rex"])
        #expect(opened.objects(Dog.self).count == 1)
    }

    @Test func writeCopyToFileRefusesAnExistingFileAMissingFolderAndAKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try t.open()
        let taken = t.folder.url.appendingPathComponent("taken.realm")
        try Data("precious".utf8).write(to: taken)
        let exists = try #require(throws: Realm.Error.self) { try realm.writeCopy(toFile: taken) }
        #expect(exists.code == .fileExists)
        #expect(try Data(contentsOf: taken) == Data("precious".utf8))

        let nowhere = t.folder.url.appendingPathComponent("no/such/folder/copy.realm")
        let missing = try #require(throws: Realm.Error.self) { try realm.writeCopy(toFile: nowhere) }
        #expect(missing.code == .fileNotFound)
        #expect(!FileManager.default.fileExists(atPath: nowhere.deletingLastPathComponent().path))

        let keyed = t.folder.url.appendingPathComponent("keyed.realm")
        // A key must be 64 bytes (EncryptionTests has copies with keys).
        let key = try #require(throws: Realm.Error.self) { try realm.writeCopy(toFile: keyed, encryptionKey: Data(count: 16)) }
        #expect(key.code == .invalidInput && key.message.contains("64 bytes"))
        #expect(!FileManager.default.fileExists(atPath: keyed.path))
        let names = try FileManager.default.contentsOfDirectory(atPath: t.folder.url.path)
        #expect(names.allSatisfy { !$0.hasSuffix(".partial") }, "no half-written copy is left")
    }

    @Test func writeCopyInsideAWriteTransactionIsRefused() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try t.open()
        let copy = t.folder.url.appendingPathComponent("copy.realm")
        realm.beginWrite()
        defer { realm.cancelWrite() }
        let error = try #require(throws: Realm.Error.self) { try realm.writeCopy(toFile: copy) }
        #expect(error.code == .alreadyInWriteTransaction)
    }

    // MARK: writeCopy(configuration:)

    @Test func writeCopyToALocalConfigurationChecksItsFolderAndKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try t.open()
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }

        let nowhere = Realm.Configuration(fileURL: t.folder.url.appendingPathComponent("no/such/copy.realm"))
        let missing = try #require(throws: Realm.Error.self) { try realm.writeCopy(configuration: nowhere) }
        #expect(missing.code == .fileNotFound)

        var keyed = Realm.Configuration(fileURL: t.folder.url.appendingPathComponent("keyed.realm"))
        keyed.encryptionKey = Data(count: 16)
        let key = try #require(throws: Realm.Error.self) { try realm.writeCopy(configuration: keyed) }
        #expect(key.code == .invalidInput && key.message.contains("64 bytes"))
        #expect(!Realm.fileExists(for: keyed))

        let inMemory = Realm.Configuration(inMemoryIdentifier: "copy-\(UUID().uuidString)")
        let noFile = try #require(throws: Realm.Error.self) { try realm.writeCopy(configuration: inMemory) }
        #expect(noFile.code == .invalidConfiguration)

        let copy = Realm.Configuration(fileURL: t.folder.url.appendingPathComponent("copy.realm"), objectTypes: Self.types)
        try realm.writeCopy(configuration: copy)
        #expect(try Realm(configuration: copy).objects(Dog.self).map(\.name) == ["Rex"])
    }
}
