import CAtollCipher
import Crypto
import Foundation

/// A realm's `encryptionKey`, checked (64 bytes, as in Realm) and held as a `SymmetricKey`, whose
/// bytes swift-crypto wipes when it is freed. The key itself never reaches the C shim or a log:
/// the shim gets opaque handles, and `description` names no byte of it.
///
/// Each encrypted file has a random salt in its header; the page key and the key check are
/// derived from the 64 bytes and that salt with HKDF-SHA256, so two files under one key use
/// different page keys. The header's format version says how pages are sealed (`PageCipher`):
/// new files are version 2 (a key per write); version 1 files (a random nonce per write under the
/// page key) are still read and written.
final class EncryptionKey: Sendable, CustomStringConvertible {
    static let length = 64
    private let master: SymmetricKey

    private init(_ data: Data) {
        master = SymmetricKey(data: data)
    }

    /// The key of a configuration, or `nil` without one.
    ///
    /// - Throws: `.invalidInput` when the key is not 64 bytes long.
    static func make(_ data: Data?) throws -> EncryptionKey? {
        guard let data else { return nil }
        guard data.count == length else {
            throw Realm.Error(.invalidInput, "Encryption key must be exactly \(length) bytes long (got \(data.count))")
        }
        return EncryptionKey(data)
    }

    /// Whether `other` is the same key (compared in constant time); `nil` matches `nil` only.
    static func same(_ a: EncryptionKey?, _ b: EncryptionKey?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): a === b || a.master == b.master
        default: false
        }
    }

    var description: String { "EncryptionKey(64 bytes)" }

    // MARK: File header

    /// The header's fixed start: magic, format version, unit size.
    private static let magic = Array("ATOLLENC".utf8)
    /// The format of new files' headers: 2, `PageCipher.Scheme.perWriteKey`.
    static let formatVersion: UInt16 = 2
    /// Tests only: the format new files get instead (1 writes a file as Atoll did before version 2).
    nonisolated(unsafe) static var newFileFormatVersionForTesting: UInt16?

    /// How pages of a file with header format `version` are sealed; nil for a format this build does not know.
    private static func scheme(_ version: UInt16) -> PageCipher.Scheme? {
        switch version {
        case 1: .randomNonce
        case 2: .perWriteKey
        default: nil
        }
    }

    /// A new file's header (magic, version, unit size, random salt, key check) and its cipher.
    func newHeader() -> (header: [UInt8], cipher: PageCipher) {
        var header = Self.magic
        let version = Self.newFileFormatVersionForTesting ?? Self.formatVersion
        header += [UInt8(version >> 8), UInt8(version & 0xff), 0, 0]
        let unit = UInt32(ATOLL_CIPHER_PAGE_SIZE)
        header += [UInt8(unit >> 24), UInt8((unit >> 16) & 0xff), UInt8((unit >> 8) & 0xff), UInt8(unit & 0xff)]
        header += SymmetricKey(size: .init(bitCount: 128)).withUnsafeBytes { Array($0) }
        header += Array(HMAC<SHA256>.authenticationCode(for: header, using: derive("atoll key check v1", salt: header[16..<32])))
        return (header, pageCipher(version: version, salt: header[16..<32])!)
    }

    /// The cipher for a file with `header`, or why this key cannot open it.
    func open(header: UnsafeRawBufferPointer) -> Result<PageCipher, AttachFailure> {
        let bytes = Array(header)
        guard bytes.count == Int(ATOLL_CIPHER_HEADER_SIZE), Array(bytes[0..<8]) == Self.magic else { return .failure(.notARealm) }
        let version = UInt16(bytes[8]) << 8 | UInt16(bytes[9])
        let unit = bytes[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
        guard Self.scheme(version) != nil, unit == UInt32(ATOLL_CIPHER_PAGE_SIZE) else { return .failure(.unsupported) }
        let salt = bytes[16..<32]
        guard HMAC<SHA256>.isValidAuthenticationCode(bytes[32..<64], authenticating: bytes[0..<32],
                                                     using: derive("atoll key check v1", salt: salt)) else {
            return .failure(.wrongKey)
        }
        return pageCipher(version: version, salt: salt).map { .success($0) } ?? .failure(.unsupported)
    }

    /// The cipher of a file of format `version` with header salt `salt` (its page key is derived
    /// under a label of that version).
    private func pageCipher(version: UInt16, salt: ArraySlice<UInt8>) -> PageCipher? {
        guard let scheme = Self.scheme(version) else { return nil }
        return PageCipher(key: derive("atoll page key v\(version)", salt: salt), scheme: scheme)
    }

    enum AttachFailure: Error {
        case wrongKey, notARealm, unsupported

        var code: Int32 {
            switch self {
            case .wrongKey: Int32(ATOLL_CIPHER_WRONG_KEY)
            case .notARealm: Int32(ATOLL_CIPHER_NOT_A_REALM)
            case .unsupported: Int32(ATOLL_CIPHER_UNSUPPORTED)
            }
        }
    }

    private func derive(_ purpose: String, salt: ArraySlice<UInt8>) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: master, salt: salt, info: Array(purpose.utf8), outputByteCount: 32)
    }
}
