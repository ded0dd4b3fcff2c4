@testable import AtollRealmFile
import Crypto
import CryptoExtras
import Foundation

/// Writes realm-core's encrypted-file layout from a plaintext Realm file, for tests: no Realm-written encrypted
/// file of formats 20–24 is among the fixtures yet.
///
/// It follows docs/realm-file-format.md ("Encrypted files") and computes every offset itself rather than with
/// the reader's `RealmEncryption`, so the two check each other; the Realm-written
/// `test_shared_decrypt_4k_page.realm` checks both against realm-core.
enum TestEncryptor {
    static let pageSize = 4096
    static let pagesPerBlock = 64
    /// The key the fixture generator uses too: bytes 0x00…0x3f.
    static let key: [UInt8] = Array(0..<64)

    /// The logical image realm-core would encrypt for `plain`: padded with zeros to whole pages (plus
    /// `extraPages`), and, for a streaming-form file, with the footer moved to the end of the last page, as
    /// realm-core pads a streaming write for encryption.
    static func logicalImage(_ plain: [UInt8], extraPages: Int = 0) -> [UInt8] {
        let streaming = plain.count >= 40 && plain[0..<8].allSatisfy { $0 == 0xFF } && plain[23] & 1 == 0
        let body = streaming ? Array(plain[0..<plain.count - 16]) : plain
        let tail = streaming ? Array(plain[plain.count - 16..<plain.count]) : []
        let pages = (body.count + tail.count + pageSize - 1) / pageSize + extraPages
        var image = body + [UInt8](repeating: 0, count: pages * pageSize - body.count - tail.count)
        image += tail
        return image
    }

    /// Physical offset of the ciphertext of logical page `page`: one IV table page before every 64 data pages.
    static func dataOffset(_ page: Int) -> Int { (page + page / pagesPerBlock + 1) * pageSize }

    /// Physical offset of the 64-byte IV table entry of logical page `page`.
    static func entryOffset(_ page: Int) -> Int { (page / pagesPerBlock) * (pagesPerBlock + 1) * pageSize + (page % pagesPerBlock) * 64 }

    /// The AES IV: counter (4 bytes LE), the page's logical offset (8 bytes LE), 4 zero bytes.
    static func iv(counter: UInt32, page: Int) -> [UInt8] {
        withUnsafeBytes(of: counter.littleEndian, Array.init) + withUnsafeBytes(of: Int64(page * pageSize).littleEndian, Array.init) + [0, 0, 0, 0]
    }

    /// Ciphertext and HMAC of one page.
    static func seal(_ plaintext: [UInt8], page: Int, counter: UInt32, key: [UInt8] = key) -> (ciphertext: [UInt8], hmac: [UInt8]) {
        precondition(plaintext.count == pageSize)
        let ciphertext = [UInt8](try! AES._CBC.encrypt(plaintext, using: SymmetricKey(data: key[0..<32]),
                                                       iv: AES._CBC.IV(ivBytes: iv(counter: counter, page: page)), noPadding: true))
        let hmac = ciphertext.withUnsafeBytes { HMACSHA224(key: Array(key[32..<64])).authenticationCode($0) }
        return (ciphertext, hmac)
    }

    /// Encrypts a logical image (a whole number of pages). Page `p` is written with IV counter `counter(p)`;
    /// a counter above 1 gets an earlier version in the second IV slot (as after a rewrite). Pages in
    /// `unwritten` keep an empty IV entry and zero ciphertext, like preallocated space.
    static func encrypt(_ logical: [UInt8], key: [UInt8] = key, counter: (Int) -> UInt32 = { _ in 1 }, unwritten: Set<Int> = []) -> [UInt8] {
        precondition(logical.count % pageSize == 0 && !logical.isEmpty)
        let pages = logical.count / pageSize
        // As realm-core sizes the file: a new IV table page as soon as the last one is full.
        let blocks = pages / pagesPerBlock + 1
        var file = [UInt8](repeating: 0, count: (pages + blocks) * pageSize)
        for page in 0..<pages where !unwritten.contains(page) {
            let count = counter(page)
            let (ciphertext, hmac) = seal(Array(logical[page * pageSize..<(page + 1) * pageSize]), page: page, counter: count, key: key)
            file.replaceSubrange(dataOffset(page)..<dataOffset(page) + pageSize, with: ciphertext)
            var previous: (UInt32, [UInt8]) = (0, [UInt8](repeating: 0, count: 28))
            if count > 1 {
                let older = seal([UInt8](repeating: UInt8(page & 0xFF), count: pageSize), page: page, counter: count - 1, key: key)
                previous = (count - 1, older.hmac)
            }
            setEntry(&file, page: page, iv1: count, hmac1: hmac, iv2: previous.0, hmac2: previous.1)
        }
        return file
    }

    static func setEntry(_ file: inout [UInt8], page: Int, iv1: UInt32, hmac1: [UInt8], iv2: UInt32, hmac2: [UInt8]) {
        let entry = withUnsafeBytes(of: iv1.littleEndian, Array.init) + hmac1 + withUnsafeBytes(of: iv2.littleEndian, Array.init) + hmac2
        precondition(entry.count == 64)
        file.replaceSubrange(entryOffset(page)..<entryOffset(page) + 64, with: entry)
    }

    static func entry(_ file: [UInt8], page: Int) -> (iv1: UInt32, hmac1: [UInt8], iv2: UInt32, hmac2: [UInt8]) {
        let offset = entryOffset(page)
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(file[at + $1]) << (8 * UInt32($1)) } }
        return (u32(offset), Array(file[offset + 4..<offset + 32]), u32(offset + 32), Array(file[offset + 36..<offset + 64]))
    }
}

/// Everything a client reads from a file, as one comparable value.
struct FileSnapshot: Equatable, CustomStringConvertible {
    struct Table: Equatable {
        let name: String
        let columns: [String]
        let primaryKey: String?
        let objects: [RealmObject]
    }

    let formatVersion: Int
    let schemaVersion: UInt64?
    let tables: [Table]

    init(_ file: RealmFile) throws {
        formatVersion = file.formatVersion
        schemaVersion = file.schemaVersion
        tables = try file.tables.map { table in
            var objects: [RealmObject] = []
            var cursor = table.objects()
            while let object = try cursor.next() { objects.append(object) }
            let columns = table.columns.map { "\($0.name):\($0.type):\($0.collection):\($0.isNullable):\($0.targetTable ?? "-")" }
            return Table(name: table.name, columns: columns, primaryKey: table.primaryKey, objects: objects)
        }
    }

    var description: String { "format \(formatVersion), \(tables.map { "\($0.name) (\($0.objects.count))" })" }
}
