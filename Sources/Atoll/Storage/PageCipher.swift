import CAtollCipher
import Crypto
import Foundation
import GRDBSQLite

/// Seals and opens the units of one encrypted file for the VFS shim (`CAtollCipher`) with
/// AES-256-GCM, the unit's kind and index as authenticated data, so a page moved to another
/// place in the file (or into the log) does not open. Two schemes, by the file header's format
/// version (docs/storage.md, "Encryption at rest"):
///
/// - ``Scheme/perWriteKey`` (version 2, every new file): each write draws 24 random bytes; the
///   first 12 derive a key for that write alone from the file's key (HKDF-SHA256), the last 12
///   are its nonce. A key and nonce repeat only if all 192 bits do, so no number of writes a
///   device can make comes near a collision, and no key ever seals more than one unit. Stored:
///   salt (24 bytes), ciphertext, tag (16 bytes).
/// - ``Scheme/randomNonce`` (version 1, files written before): one key per file and a random
///   96-bit nonce per write, good for about 2^32 writes (NIST SP 800-38D §8.3). Kept to read and
///   go on writing those files. Stored: nonce (12 bytes), ciphertext, tag (16 bytes).
final class PageCipher: Sendable {
    enum Scheme: Sendable {
        case randomNonce
        case perWriteKey
    }

    private let key: SymmetricKey
    let scheme: Scheme

    /// Bytes a sealed unit takes beyond its plaintext.
    var overhead: Int {
        switch scheme {
        case .randomNonce: Int(ATOLL_CIPHER_OVERHEAD_V1)
        case .perWriteKey: Int(ATOLL_CIPHER_OVERHEAD_V2)
        }
    }

    /// The random bytes of a ``Scheme/perWriteKey`` write before its nonce (the write key's salt).
    private static let writeSaltLength = 12
    private static let writeKeyLabel = Array("atoll page write key v2".utf8)

    init(key: SymmetricKey, scheme: Scheme) {
        self.key = key
        self.scheme = scheme
    }

    func seal(kind: UInt8, unit: UInt64, _ plaintext: UnsafeRawBufferPointer, into sealed: UnsafeMutableRawBufferPointer) -> Bool {
        guard sealed.count == plaintext.count + overhead else { return false }
        var aad = (UInt64(kind).bigEndian, unit.bigEndian)
        do {
            let box: AES.GCM.SealedBox
            var written = 0
            switch scheme {
            case .randomNonce:
                box = try withUnsafeBytes(of: &aad) { aad in
                    try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: aad)
                }
            case .perWriteKey:
                let salt = SymmetricKey(size: .init(bitCount: Self.writeSaltLength * 8)).withUnsafeBytes { Array($0) }
                box = try withUnsafeBytes(of: &aad) { aad in
                    try AES.GCM.seal(plaintext, using: writeKey(salt), nonce: AES.GCM.Nonce(), authenticating: aad)
                }
                sealed.copyBytes(from: salt)
                written = salt.count
            }
            guard let combined = box.combined, combined.count == sealed.count - written else { return false }
            return combined.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: sealed[written...])) == combined.count
        } catch {
            return false
        }
    }

    func open(kind: UInt8, unit: UInt64, _ sealed: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer) -> Bool {
        guard sealed.count == plaintext.count + overhead else { return false }
        var aad = (UInt64(kind).bigEndian, unit.bigEndian)
        do {
            let opened: Data
            switch scheme {
            case .randomNonce:
                let box = try AES.GCM.SealedBox(combined: sealed)
                opened = try withUnsafeBytes(of: &aad) { aad in try AES.GCM.open(box, using: key, authenticating: aad) }
            case .perWriteKey:
                let salt = Array(sealed[..<Self.writeSaltLength])
                let box = try AES.GCM.SealedBox(combined: UnsafeRawBufferPointer(rebasing: sealed[Self.writeSaltLength...]))
                opened = try withUnsafeBytes(of: &aad) { aad in try AES.GCM.open(box, using: writeKey(salt), authenticating: aad) }
            }
            guard opened.count == plaintext.count else { return false }
            return opened.copyBytes(to: plaintext) == plaintext.count
        } catch {
            return false
        }
    }

    /// The key of one ``Scheme/perWriteKey`` write: HKDF-SHA256 of the file's key with the write's salt.
    private func writeKey(_ salt: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: Self.writeKeyLabel, outputByteCount: 32)
    }
}

/// The VFS shim seen from Swift: registering it with its callbacks, the path that opens a file
/// through it, and binding a key to a new connection.
enum CipherVFS {
    /// SQLite's result of registering the shim (once, on first use).
    private static let registration: Int32 = {
        var callbacks = atoll_cipher_callbacks(
            seal: { cipher, kind, unit, plaintext, length, sealed in
                guard let cipher, let plaintext, let sealed else { return 1 }
                let pageCipher = Unmanaged<PageCipher>.fromOpaque(cipher).takeUnretainedValue()
                let n = Int(length)
                return pageCipher.seal(
                    kind: kind, unit: unit, UnsafeRawBufferPointer(start: plaintext, count: n),
                    into: UnsafeMutableRawBufferPointer(start: sealed, count: n + pageCipher.overhead)) ? 0 : 1
            },
            open: { cipher, kind, unit, sealed, length, plaintext in
                guard let cipher, let plaintext, let sealed else { return 1 }
                let pageCipher = Unmanaged<PageCipher>.fromOpaque(cipher).takeUnretainedValue()
                let n = Int(length)
                return pageCipher.open(
                    kind: kind, unit: unit, UnsafeRawBufferPointer(start: sealed, count: n + pageCipher.overhead),
                    into: UnsafeMutableRawBufferPointer(start: plaintext, count: n)) ? 0 : 1
            },
            attach: { key, header, newHeader, cipherOut in
                guard let key, let cipherOut else { return Int32(ATOLL_CIPHER_NOT_A_REALM) }
                let encryptionKey = Unmanaged<EncryptionKey>.fromOpaque(key).takeUnretainedValue()
                let cipher: PageCipher
                if let header {
                    switch encryptionKey.open(header: UnsafeRawBufferPointer(start: header, count: Int(ATOLL_CIPHER_HEADER_SIZE))) {
                    case .success(let opened): cipher = opened
                    case .failure(let failure): return failure.code
                    }
                } else {
                    guard let newHeader else { return Int32(ATOLL_CIPHER_NOT_A_REALM) }
                    let made = encryptionKey.newHeader()
                    made.header.withUnsafeBufferPointer { newHeader.update(from: $0.baseAddress!, count: $0.count) }
                    cipher = made.cipher
                }
                cipherOut.pointee = Unmanaged.passRetained(cipher).toOpaque()
                return Int32(ATOLL_CIPHER_OK)
            },
            release: { cipher in
                guard let cipher else { return }
                Unmanaged<PageCipher>.fromOpaque(cipher).release()
            })
        return atoll_cipher_register(&callbacks)
    }()

    /// The name SQLite opens `path` with through the shim: a URI naming the VFS. GRDB opens
    /// without `SQLITE_OPEN_URI`, so this needs an SQLite built with URI file names on (Debian's
    /// is); without, SQLite would take the URI for a plain file name and write a plaintext file
    /// of that name, so that is refused.
    static func uri(for path: String) throws -> String {
        guard registration == 0 else {
            throw Realm.Error(.fileAccess, "cannot open encrypted realms: the encryption layer did not register with SQLite (code \(registration))")
        }
        guard sqlite3_compileoption_used("USE_URI") == 1 else {
            throw Realm.Error(.fileAccess, "cannot open encrypted realms: this SQLite library is built without URI file names (SQLITE_USE_URI)")
        }
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file:\(escaped)?vfs=\(ATOLL_CIPHER_VFS_NAME)"
    }

    /// Whether the file at `path` starts as an encrypted realm does (whatever its key).
    static func isEncryptedFile(atPath path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 8)) ?? Data()
        return start == Data("ATOLLENC".utf8)
    }
}
