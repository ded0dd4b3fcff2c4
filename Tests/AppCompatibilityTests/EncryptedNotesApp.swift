import Atoll
import AtollTesting
import Foundation
import Testing

// A notes app that keeps its notes encrypted on disk, written as Realm's docs show it: a 64-byte
// key (from the keychain on a device), the key in the configuration, and a clear message when
// the key is wrong.

final class EncNote: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var created = Date()
}

final class EncNotesStore {
    let fileURL: URL
    private(set) var lastError: String?

    init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// A new random key, as an app makes once and keeps in the keychain.
    static func makeKey() -> Data {
        var key = Data(count: 64)
        key.withUnsafeMutableBytes { bytes in
            var generator = SystemRandomNumberGenerator()
            for i in 0..<bytes.count { bytes[i] = generator.next() }
        }
        return key
    }

    func open(key: Data) -> Realm? {
        var config = Realm.Configuration(encryptionKey: key)
        config.fileURL = fileURL
        config.objectTypes = [EncNote.self]
        do {
            let realm = try Realm(configuration: config)
            return realm
        } catch let error as Realm.Error {
            switch error.code {
            case .invalidDatabase:
                lastError = "Cannot open the notes: \(error.localizedDescription)"
            default:
                lastError = "Realm error \(error.code.rawValue)"
            }
        } catch {
            lastError = "\(error)"
        }
        return nil
    }

    func add(_ title: String, body: String, to realm: Realm) throws {
        let note = EncNote()
        note.title = title
        note.body = body
        try realm.write {
            realm.add(note)
        }
    }
}

@Suite struct EncryptedNotesApp {
    @Test func notesSurviveARelaunchWithTheSameKey() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = EncNotesStore(fileURL: folder.url.appendingPathComponent("notes.realm"))
        let key = EncNotesStore.makeKey()
        do {
            let realm = try #require(store.open(key: key))
            try store.add("Door code", body: "4711-private", to: realm)
            try store.add("Shopping", body: "milk, bread", to: realm)
        }
        let realm = try #require(store.open(key: key))
        let titles = realm.objects(EncNote.self).sorted(byKeyPath: "title").map { $0.title }
        #expect(Array(titles) == ["Door code", "Shopping"])
        let fileBytes = try Data(contentsOf: store.fileURL)
        #expect(fileBytes.range(of: Data("4711-private".utf8)) == nil)
    }

    @Test func aWrongKeyIsReportedNotCrashed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = EncNotesStore(fileURL: folder.url.appendingPathComponent("notes.realm"))
        do {
            let realm = try #require(store.open(key: EncNotesStore.makeKey()))
            try store.add("Door code", body: "4711-private", to: realm)
        }
        #expect(store.open(key: EncNotesStore.makeKey()) == nil)
        #expect(store.lastError?.hasPrefix("Cannot open the notes: Realm file decryption failed") == true)
    }
}
