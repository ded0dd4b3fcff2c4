@testable import Atoll
import AtollTesting
import Foundation
import Testing

/// The nonce budget of encryption at rest (issue 21 §5): new files seal each write under a key of
/// its own (format 2, 24 random bytes per write), files written before (format 1, one key and a
/// random 96-bit nonce per write) are still read and written, and a changed byte is detected in
/// either. Serialized: one test makes new files format 1 for a moment.
@Suite(.serialized) struct EncryptionFormatTests {
    private static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self]
    private let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

    private func encrypted(_ t: TestRealm) -> Realm.Configuration {
        var configuration = t.configuration
        configuration.encryptionKey = key
        return configuration
    }

    private func bytes(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }

    /// The header's format version (bytes 8-9, big-endian).
    private func formatVersion(_ path: String) -> Int {
        let data = bytes(path)
        return data.count >= 10 ? Int(data[8]) << 8 | Int(data[9]) : -1
    }

    private func writeDogs(_ realm: Realm, _ range: Range<Int>) throws {
        try realm.write { for i in range { realm.add(Dog(value: ["name": "dog \(i)", "age": i])) } }
    }

    /// A closed file (checkpointed into the main file): a header, then whole units of
    /// `4096 + overhead` bytes.
    private func expectLayout(_ path: String, overhead: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let size = bytes(path).count
        #expect(size > 64 && (size - 64) % (4096 + overhead) == 0, "\(size) bytes", sourceLocation: sourceLocation)
    }

    @Test func newFilesSealEachWriteUnderAKeyOfItsOwn() throws {
        let t = try TestRealm(objectTypes: Self.types)
        do { try writeDogs(Realm(configuration: encrypted(t)), 0..<100) }
        #expect(formatVersion(t.path) == 2)
        expectLayout(t.path, overhead: 40)
        let realm = try Realm(configuration: encrypted(t))
        #expect(realm.objects(Dog.self).count == 100)
    }

    /// A file written as Atoll wrote them before format 2 (the kept format-1 code path) opens,
    /// takes new writes in its own format, and opens again with everything.
    @Test func aFormat1FileIsReadAndWrittenAsBefore() throws {
        let t = try TestRealm(objectTypes: Self.types)
        EncryptionKey.newFileFormatVersionForTesting = 1
        do {
            defer { EncryptionKey.newFileFormatVersionForTesting = nil }
            try writeDogs(Realm(configuration: encrypted(t)), 0..<100)
        }
        #expect(formatVersion(t.path) == 1)
        expectLayout(t.path, overhead: 28)

        do {
            let realm = try Realm(configuration: encrypted(t))
            #expect(realm.objects(Dog.self).count == 100)
            try writeDogs(realm, 100..<300)
        }
        #expect(formatVersion(t.path) == 1, "a file keeps its format")
        expectLayout(t.path, overhead: 28)
        let realm = try Realm(configuration: encrypted(t))
        #expect(realm.objects(Dog.self).count == 300)
        #expect(realm.objects(Dog.self).filter("age == 250").first?.name == "dog 250")
    }

    /// One changed byte — in a write's random bytes (its key's salt, or its nonce) or in its
    /// ciphertext — makes the page fail to open, in either format.
    @Test(arguments: [(1, 5), (1, 12 + 300), (2, 5), (2, 18), (2, 24 + 300)])
    func aChangedByteIsDetected(format: UInt16, offsetInPage: Int) throws {
        let t = try TestRealm(objectTypes: Self.types)
        EncryptionKey.newFileFormatVersionForTesting = format
        do {
            defer { EncryptionKey.newFileFormatVersionForTesting = nil }
            try writeDogs(Realm(configuration: encrypted(t)), 0..<10)
        }
        var data = bytes(t.path)
        data[64 + offsetInPage] ^= 0x01
        try data.write(to: URL(fileURLWithPath: t.path))
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: encrypted(t)).objects(Dog.self).count }
    }
}
