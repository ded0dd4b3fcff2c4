@_spi(Testing) @testable import Atoll
import AtollTesting
import Foundation
import Testing

/// Encryption at rest (`Realm.Configuration.encryptionKey`): what is written is unreadable
/// without the key, every way of opening the file takes the key, and a wrong or missing key is a
/// typed error, never a crash or a garbled read.
@Suite struct EncryptionTests {
    private static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self]
    /// What the tests look for in the files' bytes.
    private static let secret = "ATOLL-SECRET-7f3a9c-the-treasure-is-under-the-palm"

    private static func key(_ seed: UInt8) -> Data { Data((0..<64).map { UInt8(truncatingIfNeeded: Int($0) &* 31 &+ Int(seed)) }) }
    private let key = Self.key(1)
    private let otherKey = Self.key(2)

    private func encrypted(_ t: TestRealm, key: Data? = nil) -> Realm.Configuration {
        var configuration = t.configuration
        configuration.encryptionKey = key ?? self.key
        return configuration
    }

    private func bytes(_ path: String) -> Data {
        (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
    }

    private func holdsSecret(_ path: String) -> Bool {
        ["", "-wal"].contains { bytes(path + $0).range(of: Data(Self.secret.utf8)) != nil }
    }

    /// Writes people whose names hold the secret, one with a long (overflow-page) name.
    private func writeSecrets(_ realm: Realm) throws {
        try realm.write {
            realm.add(Person(value: ["name": Self.secret, "age": 42]))
            realm.add(Person(value: ["name": "long " + String(repeating: Self.secret, count: 200)]))
            for i in 0..<200 { realm.add(Dog(value: ["name": "\(Self.secret) dog \(i)"])) }
        }
    }

    private func expectError(_ code: Realm.Error.Code, containing text: String, _ body: () throws -> Void,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch let error as Realm.Error {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("not a Realm.Error: \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Keys

    @Test func anEncryptedRealmKeepsItsObjectsAcrossOpens() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try Realm(configuration: encrypted(t))
            try writeSecrets(realm)
        }
        let realm = try Realm(configuration: encrypted(t))
        #expect(realm.object(ofType: Person.self, forPrimaryKey: Self.secret)?.age == 42)
        #expect(realm.objects(Dog.self).count == 200)
        #expect(realm.objects(Person.self).filter("name BEGINSWITH 'long'").first?.name.count == 5 + 200 * Self.secret.utf8.count)
    }

    @Test func aKeyThatIsNot64BytesIsInvalidInput() throws {
        let t = try TestRealm(objectTypes: Self.types)
        for length in [0, 32, 63, 65, 128] {
            expectError(.invalidInput, containing: "64 bytes") { _ = try Realm(configuration: encrypted(t, key: Data(count: length))) }
        }
        #expect(!Realm.fileExists(for: t.configuration), "nothing was created")
        let realm = try Realm(configuration: encrypted(t))
        expectError(.invalidInput, containing: "64 bytes") {
            try realm.writeCopy(toFile: t.folder.url.appendingPathComponent("copy.realm"), encryptionKey: Data(count: 16))
        }
    }

    @Test func aWrongKeyIsInvalidDatabaseAndLeavesTheFileWhole() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try Realm(configuration: encrypted(t))
            try writeSecrets(realm)
            // While the file is open in this process, and in the log only (not checkpointed yet).
            expectError(.invalidDatabase, containing: "decryption failed") { _ = try Realm(configuration: encrypted(t, key: otherKey)) }
            expectError(.invalidDatabase, containing: "is encrypted") {
                _ = try Realm(configuration: encrypted(t))  // (same key: fine)
                var plain = t.configuration
                plain.encryptionKey = nil
                _ = try Realm(configuration: plain)
            }
        }
        // With no realm of the file open: the key is checked against the file itself.
        for _ in 0..<2 {
            expectError(.invalidDatabase, containing: "decryption failed") { _ = try Realm(configuration: encrypted(t, key: otherKey)) }
        }
        expectError(.invalidDatabase, containing: "is encrypted") { _ = try Realm(configuration: t.configuration) }
        let realm = try Realm(configuration: encrypted(t))
        #expect(realm.objects(Dog.self).count == 200, "failed opens neither lost nor damaged a commit")
    }

    @Test func aPlaintextFileWithAKeyIsFileAccess() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try t.open()
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        }
        expectError(.invalidDatabase, containing: "not encrypted") { _ = try Realm(configuration: encrypted(t)) }
        #expect(try t.open().objects(Dog.self).count == 1)
    }

    @Test func aTamperedPageIsAnErrorNotAGarbledRead() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do { try writeSecrets(Realm(configuration: encrypted(t))) }
        // Closed: the log was checkpointed into the file. Flip one byte of the first page.
        var data = bytes(t.path)
        data[64 + 12 + 200] ^= 0x01
        try data.write(to: URL(fileURLWithPath: t.path))
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: encrypted(t)) }
    }

    // MARK: What reaches the disk

    @Test func theFileAndItsLogNeverHoldWhatWasWritten() throws {
        // The same writes without a key put the secret in the files: the check can fail.
        let plain = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try plain.open()
            try writeSecrets(realm)
            #expect(holdsSecret(plain.path))
        }
        #expect(holdsSecret(plain.path))

        let t = try TestRealm(objectTypes: Self.types)
        let realm = try Realm(configuration: encrypted(t))
        let before = bytes(t.path).count
        try writeSecrets(realm)
        // Right after the commit: in the log, not checkpointed yet.
        #expect(bytes(t.path + "-wal").count > 100_000, "the commit is in the log")
        #expect(!holdsSecret(t.path))
        // The background checkpointer opens the file with the key and copies the log into it.
        let deadline = Date().addingTimeInterval(10)
        while bytes(t.path).count < before + 40_000, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(bytes(t.path).count > before + 40_000, "the checkpointer copied the log into the file")
        #expect(!holdsSecret(t.path))
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name ENDSWITH 'dog 7'")) }
        #expect(!holdsSecret(t.path))
    }

    @Test func anEncryptedInMemoryRealmKeepsItsTemporaryFileEncrypted() throws {
        var configuration = Realm.Configuration(inMemoryIdentifier: "enc-\(UUID().uuidString)", objectTypes: Self.types)
        configuration.encryptionKey = key
        let realm = try Realm(configuration: configuration)
        try writeSecrets(realm)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-memory")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let mine = files.filter { $0.hasPrefix("\(ProcessInfo.processInfo.processIdentifier)-") && $0.contains("enc") }
        #expect(!mine.isEmpty)
        for file in mine { #expect(!holdsSecret(folder.appendingPathComponent(file).path)) }
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 200)
    }

    @Test func commitsLeftInTheLogByAKilledProcessAreRecovered() async throws {
        let t = try TestRealm(objectTypes: Self.types)
        let path = t.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self, Dog.self, Address.self])
            configuration.encryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: Int($0) &* 31 &+ 1) })
            let realm = try Realm(configuration: configuration)
            try realm.write { for i in 0..<50 { realm.add(Dog(value: ["name": "dog \(i)"])) } }
            _exit(0)  // no close, no last checkpoint: the commit is in the log
        }
        #expect(bytes(path + "-wal").count > 10_000)
        let realm = try Realm(configuration: encrypted(t))
        #expect(realm.objects(Dog.self).count == 50, "log recovery read the encrypted frames")
    }

    // MARK: Every way in

    @Test func frozenAndReadOnlyRealmsOpenWithTheKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let frozen: Realm
        do {
            let realm = try Realm(configuration: encrypted(t))
            try writeSecrets(realm)
            frozen = realm.freeze()
        }
        #expect(frozen.objects(Dog.self).count == 200)
        var readOnly = encrypted(t)
        readOnly.readOnly = true
        #expect(try Realm(configuration: readOnly).objects(Dog.self).count == 200)
        expectError(.invalidDatabase, containing: "different encryption key") {
            var wrong = readOnly
            wrong.encryptionKey = otherKey
            _ = try Realm(configuration: wrong)
        }
        _ = frozen
    }

    @Test func aReadOnlyRealmOpensAnEncryptedFileWithItsKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do { try writeSecrets(Realm(configuration: encrypted(t))) }
        var readOnly = encrypted(t)
        readOnly.readOnly = true
        #expect(try Realm(configuration: readOnly).objects(Dog.self).count == 200)
        readOnly.encryptionKey = otherKey
        expectError(.invalidDatabase, containing: "decryption failed") { _ = try Realm(configuration: readOnly) }
    }

    @Test func writeCopyAddsChangesOrDropsTheKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try Realm(configuration: encrypted(t))
        try writeSecrets(realm)
        let folder = t.folder.url
        func open(_ name: String, _ key: Data?) throws -> Realm {
            var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent(name), objectTypes: Self.types)
            configuration.encryptionKey = key
            return try Realm(configuration: configuration)
        }
        // Another key: the copy opens with it, not with the source's.
        try realm.writeCopy(toFile: folder.appendingPathComponent("rekeyed.realm"), encryptionKey: otherKey)
        #expect(!holdsSecret(folder.appendingPathComponent("rekeyed.realm").path))
        expectError(.invalidDatabase, containing: "decryption failed") { _ = try open("rekeyed.realm", key) }
        #expect(try open("rekeyed.realm", otherKey).objects(Dog.self).count == 200)
        // No key: a plaintext copy.
        try realm.writeCopy(toFile: folder.appendingPathComponent("plain.realm"), encryptionKey: nil)
        #expect(holdsSecret(folder.appendingPathComponent("plain.realm").path))
        let plain = try open("plain.realm", nil)
        #expect(plain.objects(Dog.self).count == 200)
        // Plaintext to encrypted.
        try plain.writeCopy(toFile: folder.appendingPathComponent("again.realm"), encryptionKey: key)
        #expect(!holdsSecret(folder.appendingPathComponent("again.realm").path))
        #expect(try open("again.realm", key).object(ofType: Person.self, forPrimaryKey: Self.secret)?.age == 42)
        // writeCopy(configuration:) takes the configuration's key.
        var target = Realm.Configuration(fileURL: folder.appendingPathComponent("configured.realm"), objectTypes: Self.types)
        target.encryptionKey = otherKey
        try realm.writeCopy(configuration: target)
        #expect(try Realm(configuration: target).objects(Dog.self).count == 200)
        #expect(!holdsSecret(folder.appendingPathComponent("configured.realm").path))
    }

    @Test func anEncryptedSeedIsCopiedAndOpensWithTheKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        let seed = t.folder.url.appendingPathComponent("seed.realm")
        do {
            let builder = try Realm(configuration: encrypted(t))
            try writeSecrets(builder)
            try builder.writeCopy(toFile: seed, encryptionKey: key)
        }
        var configuration = Realm.Configuration(fileURL: t.folder.url.appendingPathComponent("app/seeded.realm"),
                                                objectTypes: Self.types, seedFilePath: seed)
        expectError(.invalidDatabase, containing: "is encrypted") { _ = try Realm(configuration: configuration) }
        configuration.encryptionKey = key
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 200)
        #expect(!holdsSecret(configuration.fileURL!.path))
    }

    @Test func compactionOnLaunchKeepsTheFileEncrypted() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try Realm(configuration: encrypted(t))
            try writeSecrets(realm)
            try realm.write { realm.delete(realm.objects(Dog.self)) }
        }
        let before = bytes(t.path).count
        var configuration = encrypted(t)
        let asked = Recorder<Int>()
        configuration.shouldCompactOnLaunch = { total, _ in
            asked.append(total)
            return true
        }
        let realm = try Realm(configuration: configuration)
        #expect(asked.all.count == 1)
        #expect(bytes(t.path).count < before)
        #expect(realm.objects(Person.self).count == 2)
        #expect(!holdsSecret(t.path))
    }

    @Test func schemaVersionAtURLAndRawSQLiteReadWithTheKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do { try writeSecrets(Realm(configuration: encrypted(t))) }
        #expect(try schemaVersionAtURL(t.configuration.fileURL!, encryptionKey: key) == 0)
        expectError(.invalidDatabase, containing: "decryption failed") { _ = try schemaVersionAtURL(t.configuration.fileURL!, encryptionKey: otherKey) }
        expectError(.invalidDatabase, containing: "is encrypted") { _ = try schemaVersionAtURL(t.configuration.fileURL!) }
        let rows = try RawSQLite.fetch("SELECT count(*) FROM class_Dog", path: t.path, encryptionKey: key)
        #expect(rows == [["200"]])
    }

    // MARK: Deleting

    @Test func deleteFilesOfAnEncryptedRealmNeedsNoKey() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do {
            let realm = try Realm(configuration: encrypted(t))
            try writeSecrets(realm)
            expectError(.alreadyOpen, containing: "still in use") { try Realm.deleteFiles(for: t.configuration) }
        }
        // An app that lost the key deletes the file and starts again.
        #expect(try Realm.deleteFiles(for: t.configuration))
        #expect(!Realm.fileExists(for: t.configuration))
        #expect(try Realm(configuration: encrypted(t, key: otherKey)).isEmpty)
    }

    @Test func aManualClientResetBacksUpAnEncryptedRealmAsItIs() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do { try writeSecrets(Realm(configuration: encrypted(t))) }
        let backup = t.folder.url.appendingPathComponent("recovered-realms/backup.realm").path
        #expect(try FileAction(kind: .backUpThenDelete, realmPath: t.path, backupPath: backup).run())
        #expect(!Realm.fileExists(for: t.configuration))
        #expect(!holdsSecret(backup))
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: backup), objectTypes: Self.types)
        expectError(.invalidDatabase, containing: "is encrypted") { _ = try Realm(configuration: configuration) }
        configuration.encryptionKey = key
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 200, "the backup opens with the realm's key")
    }

    @Test func deleteFilesOfAnEncryptedRealmOpenInAnotherProcessIsAlreadyOpen() async throws {
        let t = try TestRealm(objectTypes: Self.types)
        let realm = try Realm(configuration: encrypted(t))
        try writeSecrets(realm)
        let path = t.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            do {
                try Realm.deleteFiles(for: Realm.Configuration(fileURL: URL(fileURLWithPath: path)))
            } catch Realm.Error.alreadyOpen {
                exit(FileManager.default.fileExists(atPath: path) ? 0 : 2)
            }
            exit(1)
        }
        withExtendedLifetime(realm) {}
    }
}

/// A synced realm keeps its sync state, history and subscriptions in its own file: with a key,
/// all of it is encrypted, and sync reads and writes it through the key.
@MainActor @Suite(.serialized) struct EncryptedSyncTests {
    private static let secret = "ATOLL-SYNCED-SECRET-51c2"

    @Test func anEncryptedSyncedRealmUploadsAndDownloadsAndKeepsItsFileEncrypted() async throws {
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var configuration = frodo.configuration(partitionValue: "enc")
            configuration.objectTypes = [SyncedTask.self]
            configuration.encryptionKey = Data(repeating: 7, count: 64)
            let realmA = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            try realmA.write { realmA.add(SyncedTask(value: ["name": Self.secret, "owner": "Frodo"])) }
            try await realmA.syncSession!.wait(for: .upload)

            var samConfiguration = sam.configuration(partitionValue: "enc")
            samConfiguration.objectTypes = [SyncedTask.self]
            samConfiguration.encryptionKey = Data(repeating: 9, count: 64)
            let realmB = try await Realm(configuration: samConfiguration, downloadBeforeOpen: .always)
            #expect(realmB.objects(SyncedTask.self).map(\.name) == [Self.secret])

            for path in [configuration.fileURL!.path, samConfiguration.fileURL!.path] {
                for suffix in ["", "-wal"] {
                    let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data()
                    #expect(bytes.range(of: Data(Self.secret.utf8)) == nil, "\(path + suffix)")
                }
            }
            let state = try RawSQLite.fetch("SELECT count(*) FROM _atoll_sync_state", path: configuration.fileURL!.path,
                                            encryptionKey: configuration.encryptionKey)
            #expect(state != [["0"]], "the sync state is in the encrypted file")
        }
    }
}
