@testable import AtollRealmFile
import Crypto
import Foundation
import Testing

/// Encrypted Realm files: realm-core's page encryption (AES-256-CBC + HMAC-SHA224, IV tables every 64 pages).
@Suite struct EncryptionTests {
    static let key = Data(TestEncryptor.key)

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RealmFileError {
            if case let .invalidDatabase(reason) = error { return reason }
            return "\(error)"
        } catch {
            return "unexpected \(error)"
        }
    }

    /// An encrypted copy of fixture `name` with IV counters that vary by page (1, 2 or 3).
    static func encryptedFixture(_ name: String, extraPages: Int = 0, unwritten: Set<Int> = []) throws -> (plain: [UInt8], encrypted: [UInt8]) {
        let plain = TestEncryptor.logicalImage([UInt8](try Fixtures.data(name)), extraPages: extraPages)
        return (plain, TestEncryptor.encrypt(plain, counter: { UInt32($0 % 3 + 1) }, unwritten: unwritten))
    }

    // MARK: - Primitives

    @Test func sha224KnownAnswers() {
        func sha(_ bytes: [UInt8]) -> String { Self.hex(bytes.withUnsafeBytes { HMACSHA224.hash($0) }) }
        #expect(sha([]) == "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f")
        #expect(sha(Array("abc".utf8)) == "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7")
        #expect(sha(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525")
        let long = (0..<20).flatMap { _ in (0..<256).map(UInt8.init) }
        #expect(sha(long) == "f457a4ed910cfaea53884536a6b3bbdb770afd194e121f30f47ad8f5")
    }

    @Test func hmacSHA224KnownAnswers() {
        func mac(_ key: [UInt8], _ message: [UInt8]) -> String { Self.hex(message.withUnsafeBytes { HMACSHA224(key: key).authenticationCode($0) }) }
        // RFC 4231 test cases 1 and 2.
        #expect(mac([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8)) == "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22")
        #expect(mac(Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)) == "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44")
        // A 32-byte key over a 4096-byte message, as realm-core uses it.
        let page = (0..<16).flatMap { _ in (0..<256).map(UInt8.init) }
        #expect(mac(Array(32..<64), page) == "de812bfa01c55603b7a74551a6d1b97f76fc608b7d0d3c34fdd804c6")
    }

    /// The reader's offsets agree with the test encryptor's, and every logical page lies inside the file.
    @Test func layoutArithmetic() {
        for physicalPages in 2...400 {
            let size = physicalPages * 4096
            let logical = RealmEncryption.logicalSize(physicalSize: size)
            let tablePages = (physicalPages + 64) / 65
            #expect(logical == size - tablePages * 4096)
            for page in 0..<logical / 4096 {
                #expect(RealmEncryption.pageOffset(page: page) == TestEncryptor.dataOffset(page))
                #expect(RealmEncryption.entryOffset(page: page) == TestEncryptor.entryOffset(page))
                #expect(RealmEncryption.pageOffset(page: page) + 4096 <= size)
                #expect(RealmEncryption.pageOffset(page: page) % (65 * 4096) != 0)
            }
        }
    }

    // MARK: - A file written by realm-core

    /// `test_shared_decrypt_4k_page.realm` is realm-core's own encrypted test file (format 9, so older than
    /// this reader reads): decrypting it checks key halves, HMAC, IV and layout against realm-core.
    static let legacyName = "test_shared_decrypt_4k_page.realm"
    /// realm-core's test key when that file was written.
    static let legacyKey = Data("1234567890123456789012345678901123456789012345678901234567890123".utf8)

    /// Every page of an encrypted file decrypted (zeros for one that cannot be), and the pages that could be.
    static func decryptWhole(_ raw: [UInt8], key: Data) throws -> (image: [UInt8], readable: [Int]) {
        let decrypted = try RealmEncryption.decrypt(MappedBytes.copy(Data(raw)), key: key)
        let decryptor = try #require(decrypted.decryptor)
        var image: [UInt8] = []
        var readable: [Int] = []
        for page in 0..<decryptor.pageCount {
            if let span = try? decryptor.span(page * 4096, 4096, checking: true) {
                image += Array(span)
                readable.append(page)
            } else {
                image += [UInt8](repeating: 0, count: 4096)
            }
        }
        return (image, readable)
    }

    /// An encrypted file is decrypted as it is read, a few pages at a time: reading all of a file of
    /// more pages than the cache holds never holds more than the cache.
    @Test func anEncryptedFileIsNeverDecryptedWhole() throws {
        let name = "test_upgrade_database_1000_23.realm"
        let plain = TestEncryptor.logicalImage([UInt8](try Fixtures.data(name)), extraPages: PageDecryptor.cachedPages + 10)
        let encrypted = TestEncryptor.encrypt(plain)
        let file = try RealmFile(data: Data(encrypted), encryptionKey: Self.key)
        #expect(try FileSnapshot(file) == FileSnapshot(Fixtures.open(name)))
        // Page by page through more pages than the cache holds.
        let decrypted = try RealmEncryption.decrypt(MappedBytes.copy(Data(encrypted)), key: Self.key)
        let decryptor = try #require(decrypted.decryptor)
        #expect(decryptor.pageCount > PageDecryptor.cachedPages)
        var spans = 0
        for page in 0..<decryptor.pageCount {
            if (try? decryptor.span(page * 4096, 4096, checking: true)) != nil { spans += 1 }
            #expect(decryptor.cachedCount <= PageDecryptor.cachedPages)
        }
        #expect(spans == decryptor.pageCount)
    }

    @Test func realmWrittenEncryptedFileDecrypts() throws {
        let raw = [UInt8](try Fixtures.data(Self.legacyName))
        #expect(raw.count == 77824)
        let (image, readable) = try Self.decryptWhole(raw, key: Self.legacyKey)
        #expect(image.count == 73728)
        // The whole logical image, never-written pages as zeros, as an independent decryption produced it.
        let digest = Self.hex(Array(Crypto.SHA256.hash(data: image)))
        #expect(digest == "5fa78b2ca697ec6d3d07fe3ab4afcb290903edf0a3172723404e4d8bc9bf793f")
        #expect(Array(image[16..<20]) == Array("T-DB".utf8))
        #expect(HeaderTests.read(at: 8, in: image) == 36952)  // slot 1's top ref: the first AES block, so the IV is right
        // Page 0 was written three times (iv1 3, iv2 2); pages 1–8 and 10–15 never.
        let entry = TestEncryptor.entry(raw, page: 0)
        #expect(entry.iv1 == 3 && entry.iv2 == 2)
        #expect(readable == [0, 9, 16, 17])
        // The test wrote one string of 1.5 × 4096 'a's, across pages 16 and 17.
        #expect(image[65544..<65544 + 6144].allSatisfy { $0 == UInt8(ascii: "a") })

        #expect(throws: RealmFileError.unsupportedFormat(version: 9, hint: "this file predates Realm 10; open it with Realm Swift 10.x or later first so it is upgraded to format 20 or newer")) {
            _ = try RealmFile(path: Fixtures.path(Self.legacyName), encryptionKey: Self.legacyKey)
        }
    }

    @Test func realmWrittenEncryptedFileWithoutOrWithWrongKey() throws {
        let path = Fixtures.path(Self.legacyName)
        let missing = Self.reason { _ = try RealmFile(path: path) }
        #expect(missing?.contains("encrypted Realm file: it is encrypted") == true, "\(missing ?? "")")
        // realm-core's later test key shares the HMAC half with this one: the HMAC passes, the header does not decrypt.
        let later = Data([0] + Array("123456789012345678901234567890123456789012345678901234567890123".utf8))
        #expect(later[32...] == Self.legacyKey[32...])
        let wrongAES = Self.reason { _ = try RealmFile(path: path, encryptionKey: later) }
        #expect(wrongAES?.contains("Realm file decryption failed: the encryption key is wrong") == true, "\(wrongAES ?? "")")
        let wrong = Self.reason { _ = try RealmFile(path: path, encryptionKey: Self.key) }
        #expect(wrong?.contains("Realm file decryption failed: the encryption key is wrong") == true, "\(wrong ?? "")")
    }

    // MARK: - Encrypted copies of the fixtures

    @Test(arguments: Fixtures.all)
    func encryptedCopyReadsLikeTheOriginal(name: String) throws {
        let expected = try FileSnapshot(Fixtures.open(name))
        let (_, encrypted) = try Self.encryptedFixture(name)
        let file = try RealmFile(data: Data(encrypted), encryptionKey: Self.key)
        #expect(try FileSnapshot(file) == expected)
    }

    @Test func encryptedFileOpensFromAPath() throws {
        let name = "test_upgrade_database_1000_23.realm"
        let (_, encrypted) = try Self.encryptedFixture(name)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("enc-\(UUID().uuidString).realm").path
        try Data(encrypted).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try RealmFile(path: path, encryptionKey: Self.key)
        #expect(try FileSnapshot(file) == FileSnapshot(Fixtures.open(name)))
        #expect(try file.table(named: "table").objectCount() == 10_000)
    }

    /// Content on both sides of an IV table: a synthetic file of ~330 KB (81 pages, two IV blocks), and the
    /// 10,000-object fixture padded to three blocks with never-written pages and its footer in the last one.
    @Test func filesSpanningSeveralIVBlocks() throws {
        var b = SyntheticFileBuilder()
        let values: [[UInt8]?] = (0..<330).map { index in index == 7 ? nil : (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 + index) } }
        let columns = [SyntheticFileBuilder.Column(name: "id", type: 0, attributes: 0, target: 0, leaf: b.ints((0..<330).map(Int64.init))),
                       SyntheticFileBuilder.Column(name: "blob", type: 4, attributes: 16, target: 0, leaf: b.smallBlobs(values))]
        let table = b.table(key: 0, columns: columns, count: 330)
        let synthetic = b.finish(tableNames: ["big"], tables: [table])
        let logical = TestEncryptor.logicalImage([UInt8](synthetic))
        #expect(logical.count / 4096 > 64)
        let file = try RealmFile(data: Data(TestEncryptor.encrypt(logical, counter: { UInt32($0 % 5 + 1) })), encryptionKey: Self.key)
        let snapshot = try FileSnapshot(file)
        #expect(snapshot == (try FileSnapshot(RealmFile(data: synthetic))))
        let blobs = snapshot.tables[0].objects.map { $0["blob"] }
        let expectedBlobs: [RealmValue?] = values.map { $0.map { RealmValue.binary(Data($0)) } ?? .null }
        let sameBlobs = blobs == expectedBlobs
        #expect(sameBlobs, "the 330 blobs differ")

        let name = "test_upgrade_database_1000_23.realm"
        let pages = (TestEncryptor.logicalImage([UInt8](try Fixtures.data(name))).count / 4096)
        let padded = try Self.encryptedFixture(name, extraPages: 140, unwritten: Set(pages..<pages + 139))
        #expect(padded.encrypted.count == (pages + 140 + 3) * 4096)
        let paddedFile = try RealmFile(data: Data(padded.encrypted), encryptionKey: Self.key)
        #expect(try FileSnapshot(paddedFile) == FileSnapshot(Fixtures.open(name)))
    }

    // MARK: - Keys

    @Test func wrongKeyIsReportedAsSuch() throws {
        let (_, encrypted) = try Self.encryptedFixture("sync-metadata-v6.realm")
        for byte in [0, 31, 32, 63] {
            var key = TestEncryptor.key
            key[byte] ^= 0x01
            let reason = Self.reason { _ = try RealmFile(data: Data(encrypted), encryptionKey: Data(key)) }
            #expect(reason?.hasPrefix("Realm file decryption failed: the encryption key is wrong") == true, "byte \(byte): \(reason ?? "")")
        }
    }

    @Test func missingKeyIsReportedAsEncrypted() throws {
        for name in ["sync-metadata-v6.realm", "test_upgrade_database_1000_23.realm", "test_upgrade_database_4_22.realm"] {
            let (_, encrypted) = try Self.encryptedFixture(name)
            let reason = Self.reason { _ = try RealmFile(data: Data(encrypted)) }
            #expect(reason?.contains("it is encrypted, open it with its 64-byte encryption key") == true, "\(name): \(reason ?? "")")
        }
        // Random bytes are not mistaken for an encrypted file.
        var random = FuzzTests.SplitMix64(state: 42)
        let noise = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) })
        let reason = Self.reason { _ = try RealmFile(data: noise) }
        #expect(reason == "no T-DB mnemonic: not a Realm file, an encrypted Realm file, or corrupted")
    }

    @Test(arguments: [0, 32, 63, 65, 128])
    func keyOfTheWrongLengthIsRejected(length: Int) throws {
        let (_, encrypted) = try Self.encryptedFixture("sync-metadata-v6.realm")
        let reason = Self.reason { _ = try RealmFile(data: Data(encrypted), encryptionKey: Data(repeating: 1, count: length)) }
        #expect(reason == "encryption key must be 64 bytes (32 bytes of AES-256 key, then 32 of HMAC-SHA224 key), not \(length)")
    }

    @Test(arguments: Fixtures.all)
    func keyForAPlainFileIsRejected(name: String) throws {
        let reason = Self.reason { _ = try RealmFile(data: Fixtures.data(name), encryptionKey: Self.key) }
        #expect(reason?.contains("the file is not encrypted") == true, "\(reason ?? "")")
    }

    // MARK: - Damage

    /// A flipped bit in any page's ciphertext or HMAC is caught when the page is read, and never changes a value
    /// silently: reading either fails, naming the page, or gives exactly the original contents (an unused page).
    @Test(arguments: ["test_upgrade_database_1000_23.realm", "sync-metadata-v6.realm", "test_upgrade_database_4_22.realm"])
    func flippedBitIsCaught(name: String) throws {
        let expected = try FileSnapshot(Fixtures.open(name))
        let (plain, encrypted) = try Self.encryptedFixture(name)
        var caught = 0
        for page in 0..<plain.count / 4096 {
            for (what, offset) in [("ciphertext", TestEncryptor.dataOffset(page) + 1000 + page), ("hmac1", TestEncryptor.entryOffset(page) + 10)] {
                var damaged = encrypted
                damaged[offset] ^= 0x10
                do {
                    let snapshot = try FileSnapshot(RealmFile(data: Data(damaged), encryptionKey: Self.key))
                    #expect(snapshot == expected, "\(name) page \(page) \(what)")
                } catch let error as RealmFileError {
                    caught += 1
                    guard case let .invalidDatabase(reason) = error else { Issue.record("\(error)"); continue }
                    if page == 0 {
                        #expect(reason.contains("page 0 (the file header) fails its HMAC check") || reason.contains("the encryption key is wrong"), "\(reason)")
                    } else {
                        #expect(reason.contains("Realm file decryption failed: page \(page) "), "\(name) page \(page) \(what): \(reason)")
                        #expect(reason.contains("HMAC"), "\(reason)")
                    }
                }
            }
        }
        #expect(caught > 0)
    }

    @Test func damagedHeaderPageIsNotBlamedOnTheKey() throws {
        var (_, encrypted) = try Self.encryptedFixture("test_upgrade_database_1000_23.realm")
        encrypted[TestEncryptor.dataOffset(0) + 100] ^= 1
        let reason = Self.reason { _ = try RealmFile(data: Data(encrypted), encryptionKey: Self.key) }
        #expect(reason == "Realm file decryption failed: page 0 (the file header) fails its HMAC check while other pages pass: the file is damaged")
    }

    @Test func truncatedEncryptedFileIsAnError() throws {
        let (_, encrypted) = try Self.encryptedFixture("test_upgrade_database_1000_23.realm")
        let size = encrypted.count
        for length in [0, 23, 100, 4096, 8191, 8192, 12288, size / 2, size - 4096, size - 100, size - 1] {
            let reason = Self.reason { _ = try FuzzTests.readEverything(Data(encrypted[0..<length]), encryptionKey: Self.key) }
            #expect(reason != nil, "length \(length)")
            if length % 4096 != 0 {
                #expect(reason?.contains("truncated?") == true || reason?.contains("too small") == true, "length \(length): \(reason ?? "")")
            }
        }
    }

    /// A rewrite interrupted after its IV entry was written but before its data: hmac1 does not match the old
    /// data, hmac2 does, so the page decrypts with iv2.
    @Test func secondIVSlotIsUsedAfterAnInterruptedRewrite() throws {
        let name = "test_upgrade_database_1000_23.realm"
        let (plain, encrypted) = try Self.encryptedFixture(name)
        let expected = try FileSnapshot(Fixtures.open(name))
        var interrupted = encrypted
        for page in 0..<plain.count / 4096 {
            let old = TestEncryptor.entry(encrypted, page: page)
            let newer = TestEncryptor.seal([UInt8](repeating: 0xEE, count: 4096), page: page, counter: old.iv1 + 1)
            TestEncryptor.setEntry(&interrupted, page: page, iv1: old.iv1 + 1, hmac1: newer.hmac, iv2: old.iv1, hmac2: old.hmac1)
        }
        #expect(try FileSnapshot(RealmFile(data: Data(interrupted), encryptionKey: Self.key)) == expected)

        // The same entry with a damaged hmac2 matches neither slot.
        let topPage = try RealmFile(data: Fixtures.data(name)).topRef / 4096
        #expect(topPage > 0)
        var bad = interrupted
        bad[TestEncryptor.entryOffset(Int(topPage)) + 40] ^= 1
        let reason = Self.reason { _ = try FuzzTests.readEverything(Data(bad), encryptionKey: Self.key) }
        #expect(reason?.contains("page \(topPage) ") == true && reason?.contains("fails its HMAC check in both IV slots") == true, "\(reason ?? "")")

        // A first write that never completed (iv2 0) is unreadable, not garbage.
        var first = encrypted
        let newer = TestEncryptor.seal([UInt8](repeating: 0xEE, count: 4096), page: Int(topPage), counter: 1)
        TestEncryptor.setEntry(&first, page: Int(topPage), iv1: 1, hmac1: newer.hmac, iv2: 0, hmac2: [UInt8](repeating: 0, count: 28))
        let firstReason = Self.reason { _ = try FuzzTests.readEverything(Data(first), encryptionKey: Self.key) }
        #expect(firstReason?.contains("has no earlier version") == true, "\(firstReason ?? "")")
    }

    @Test func neverWrittenPageIsAnErrorOnlyWhenRead() throws {
        let name = "test_upgrade_database_1000_23.realm"
        let plainFile = try RealmFile(data: Fixtures.data(name))
        let topPage = Int(plainFile.topRef / 4096)
        let (_, encrypted) = try Self.encryptedFixture(name, unwritten: [topPage])
        let reason = Self.reason { _ = try RealmFile(data: Data(encrypted), encryptionKey: Self.key) }
        #expect(reason?.contains("page \(topPage) (bytes \(topPage * 4096)..<\(topPage * 4096 + 4096)) was never written") == true, "\(reason ?? "")")
    }

    /// A page whose stale HMAC matches nothing but whose ciphertext is all zeros reads as zeros (realm-core does
    /// the same: space that was shrunk and regrown).
    @Test func zeroFilledPageWithStaleHMACReadsAsZeros() throws {
        let name = "test_upgrade_database_4_23.realm"
        let plain = TestEncryptor.logicalImage([UInt8](try Fixtures.data(name)), extraPages: 2)
        let pages = plain.count / 4096
        var encrypted = TestEncryptor.encrypt(plain, unwritten: [pages - 2])
        let stale = TestEncryptor.seal([UInt8](repeating: 1, count: 4096), page: pages - 2, counter: 4)
        TestEncryptor.setEntry(&encrypted, page: pages - 2, iv1: 5, hmac1: [UInt8](repeating: 9, count: 28), iv2: 4, hmac2: stale.hmac)
        let check = encrypted.withUnsafeBytes { raw in
            RealmEncryption.check(raw, page: pages - 2, hmac: HMACSHA224(key: Array(TestEncryptor.key[32...])))
        }
        #expect(check == .zeroFilled)
        let (image, readable) = try Self.decryptWhole(encrypted, key: Self.key)
        #expect(readable == Array(0..<pages))
        #expect(image == plain)
        #expect(try FileSnapshot(RealmFile(data: Data(encrypted), encryptionKey: Self.key)) == FileSnapshot(Fixtures.open(name)))
    }

    // MARK: - The generated fixtures, when present

    static let generatedPair = ("allTypes_v24.realm", "allTypes_v24_encrypted.realm")
    static var generatedPairExists: Bool {
        FileManager.default.fileExists(atPath: Fixtures.path(generatedPair.0)) && FileManager.default.fileExists(atPath: Fixtures.path(generatedPair.1))
    }

    /// realm-core-written files with the same content, one encrypted with key 0x00…0x3f.
    @Test(.enabled(if: generatedPairExists))
    func realmWrittenEncryptedFileReadsLikeItsPlainTwin() throws {
        let plain = try FileSnapshot(Fixtures.open(Self.generatedPair.0))
        let encrypted = try FileSnapshot(RealmFile(path: Fixtures.path(Self.generatedPair.1), encryptionKey: Self.key))
        #expect(encrypted == plain)
        #expect(!plain.tables.isEmpty)
        let reason = Self.reason { _ = try RealmFile(path: Fixtures.path(Self.generatedPair.1)) }
        #expect(reason?.contains("it is encrypted") == true, "\(reason ?? "")")
    }
}
