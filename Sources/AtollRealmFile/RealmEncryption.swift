import Crypto
import CryptoExtras
import Foundation

/// realm-core's page encryption, read side (docs/realm-file-format.md, "Encrypted files").
///
/// The logical file (the bytes the rest of the reader sees) is cut into 4096-byte pages, each encrypted with
/// AES-256-CBC and authenticated with HMAC-SHA224. The physical file interleaves one 4096-byte table of
/// 64-byte IV entries before every 64 data pages.
enum RealmEncryption {
    /// Size of an encrypted page and of an IV table page, whatever the system's page size.
    static let pageSize = 4096
    /// One IV table entry: iv1 (4 bytes), hmac1 (28), iv2 (4), hmac2 (28).
    static let entrySize = 64
    /// Data pages covered by one IV table page.
    static let pagesPerBlock = pageSize / entrySize
    /// The key: 32 bytes of AES-256 key, then 32 bytes of HMAC-SHA224 key.
    static let keySize = 64
    /// One IV table page and one data page.
    static let minimumFileSize = 2 * pageSize
    /// With a wrong key every page fails its HMAC check; these many other pages are tried before the key, rather
    /// than page 0, is blamed.
    static let pagesProbedForWrongKey = 16

    /// Logical size of an encrypted file of `physicalSize` bytes (a multiple of `pageSize`): minus one IV table
    /// page per started group of 65 pages.
    static func logicalSize(physicalSize: Int) -> Int {
        let pages = physicalSize / pageSize
        let tablePages = (pages + pagesPerBlock) / (pagesPerBlock + 1)
        return physicalSize - tablePages * pageSize
    }

    /// Physical offset of the IV table entry of logical page `page`.
    static func entryOffset(page: Int) -> Int {
        (page / pagesPerBlock) * (pagesPerBlock + 1) * pageSize + (page % pagesPerBlock) * entrySize
    }

    /// Physical offset of the ciphertext of logical page `page`.
    static func pageOffset(page: Int) -> Int {
        page * pageSize + (page / pagesPerBlock + 1) * pageSize
    }

    /// The AES-CBC IV of a page: the 32-bit IV counter and the page's logical offset as a 64-bit integer, both
    /// little-endian, then four zero bytes.
    static func aesIV(counter: UInt32, page: Int) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 16)
        for index in 0..<4 { iv[index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt32(index))) }
        let position = UInt64(page * pageSize)
        for index in 0..<8 { iv[4 + index] = UInt8(truncatingIfNeeded: position >> (8 * UInt64(index))) }
        return iv
    }

    /// Whether bytes 16–19 hold the plain `T-DB` mnemonic of an unencrypted Realm file.
    static func hasPlainHeader(_ raw: UnsafeRawBufferPointer) -> Bool {
        raw.count >= FileHeader.size && raw[16] == UInt8(ascii: "T") && raw[17] == UInt8(ascii: "-")
            && raw[18] == UInt8(ascii: "D") && raw[19] == UInt8(ascii: "B")
    }

    /// Whether `raw`, which has no plain `T-DB` mnemonic, has the shape of an encrypted Realm file: a size that is
    /// a whole number of pages, a written first IV entry, and zeros in the entries and slots that are unused.
    static func looksEncrypted(_ raw: UnsafeRawBufferPointer) -> Bool {
        let size = raw.count
        guard size >= minimumFileSize, size % pageSize == 0 else { return false }
        func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
        func zero(_ range: Range<Int>) -> Bool { raw[range].allSatisfy { $0 == 0 } }
        guard u32(0) != 0 else { return false }
        if u32(32) == 0 && !zero(36..<64) { return false }
        let pagesInFirstBlock = min(logicalSize(physicalSize: size) / pageSize, pagesPerBlock)
        return zero(pagesInFirstBlock * entrySize..<pageSize)
    }

    /// One IV table entry.
    struct Entry {
        let iv1: UInt32
        let hmac1: UnsafeRawBufferPointer
        let iv2: UInt32
        let hmac2: UnsafeRawBufferPointer

        init(_ raw: UnsafeRawBufferPointer, page: Int) {
            let offset = RealmEncryption.entryOffset(page: page)
            iv1 = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            hmac1 = UnsafeRawBufferPointer(rebasing: raw[offset + 4..<offset + 32])
            iv2 = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 32, as: UInt32.self))
            hmac2 = UnsafeRawBufferPointer(rebasing: raw[offset + 36..<offset + 64])
        }
    }

    /// What a page's IV entry and ciphertext say, as realm-core's reader decides it.
    enum PageCheck: Equatable {
        /// The ciphertext matches hmac1 (or, after an interrupted rewrite, hmac2): decrypt with this counter.
        case verified(counter: UInt32)
        /// iv1 is 0: the page was never written (preallocated space).
        case neverWritten
        /// The HMAC matches neither slot, iv2 is 0: the first write of the page never completed, or it is damaged.
        case interruptedFirstWrite
        /// The HMAC matches neither slot but the ciphertext is all zeros (space that was shrunk and regrown):
        /// realm-core reads it as zeros.
        case zeroFilled
        /// The HMAC matches neither slot: a wrong key or a damaged page.
        case mismatch
    }

    static func check(_ raw: UnsafeRawBufferPointer, page: Int, hmac: HMACSHA224) -> PageCheck {
        let entry = Entry(raw, page: page)
        guard entry.iv1 != 0 else { return .neverWritten }
        let offset = pageOffset(page: page)
        let ciphertext = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + pageSize])
        let code = hmac.authenticationCode(ciphertext)
        if HMACSHA224.constantTimeEquals(code, entry.hmac1) { return .verified(counter: entry.iv1) }
        if entry.iv2 == 0 { return .interruptedFirstWrite }
        if HMACSHA224.constantTimeEquals(code, entry.hmac2) { return .verified(counter: entry.iv2) }
        return ciphertext.allSatisfy({ $0 == 0 }) ? .zeroFilled : .mismatch
    }

    static func failure(_ what: String) -> RealmFileError {
        .invalidDatabase(reason: "Realm file decryption failed: \(what)")
    }

    /// Decrypts the encrypted Realm file `raw` with `key` into a new buffer of its logical size.
    ///
    /// Every page is authenticated and decrypted up front. Page 0 (the file header) must decrypt, or the key is
    /// reported wrong (or the file damaged or not encrypted); other pages that cannot be decrypted are recorded,
    /// and reading them later throws, as in realm-core.
    static func decrypt(_ raw: UnsafeRawBufferPointer, key: Data) throws(RealmFileError) -> MappedBytes {
        guard key.count == keySize else {
            throw .invalidDatabase(reason: "encryption key must be \(keySize) bytes (32 bytes of AES-256 key, then 32 of HMAC-SHA224 key), not \(key.count)")
        }
        let size = raw.count
        guard size >= minimumFileSize, size % pageSize == 0 else {
            if hasPlainHeader(raw) { throw notEncrypted }
            if size < minimumFileSize {
                throw failure("the file is \(size) bytes, too small for an encrypted Realm file (at least \(minimumFileSize))")
            }
            throw failure("the file is \(size) bytes, not a whole number of \(pageSize)-byte encrypted pages: truncated?")
        }
        let keyBytes = [UInt8](key)
        let hmac = HMACSHA224(key: Array(keyBytes[32..<64]))
        let aesKey = SymmetricKey(data: keyBytes[0..<32])
        let pageCount = logicalSize(physicalSize: size) / pageSize

        guard case .verified = check(raw, page: 0, hmac: hmac) else { throw diagnoseFirstPage(raw, pageCount: pageCount, hmac: hmac) }

        return try MappedBytes.build(count: pageCount * pageSize) { (output) throws(RealmFileError) -> UnreadablePages? in
            var states: [UnreadablePages.State] = []
            for page in 0..<pageCount {
                let state: UnreadablePages.State
                switch check(raw, page: page, hmac: hmac) {
                case let .verified(counter):
                    let offset = pageOffset(page: page)
                    let plaintext: Data
                    do {
                        plaintext = try AES._CBC.decrypt(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + pageSize]), using: aesKey,
                                                         iv: AES._CBC.IV(ivBytes: aesIV(counter: counter, page: page)), noPadding: true)
                    } catch {
                        throw failure("AES-CBC decryption of page \(page) failed: \(error)")
                    }
                    guard plaintext.count == pageSize else { throw failure("AES-CBC decryption of page \(page) returned \(plaintext.count) bytes") }
                    plaintext.copyBytes(to: output.baseAddress!.advanced(by: page * pageSize).assumingMemoryBound(to: UInt8.self), count: pageSize)
                    // The HMAC authenticates with the key's second half only: a wrong first half (the AES key)
                    // passes it and decrypts to noise, which the header's mnemonic exposes.
                    if page == 0 && !hasPlainHeader(UnsafeRawBufferPointer(output)) {
                        throw failure("the encryption key is wrong (its HMAC half, bytes 32–63, matches, but page 0 does not decrypt to a Realm header with its AES half, bytes 0–31), or the file is not a Realm file")
                    }
                    state = .readable
                case .zeroFilled: state = .readable  // left zero
                case .neverWritten: state = .neverWritten
                case .interruptedFirstWrite: state = .interruptedFirstWrite
                case .mismatch: state = .hmacMismatch
                }
                if state != .readable {
                    if states.isEmpty { states = Array(repeating: .readable, count: pageCount) }
                    states[page] = state
                }
            }
            return states.isEmpty ? nil : UnreadablePages(states: states)
        }
    }

    static let notEncrypted = RealmFileError.invalidDatabase(
        reason: "an encryption key was given, but the file is not encrypted (it starts with a plain Realm header): open it without a key")

    /// Why page 0 did not decrypt: a plain file, a wrong key, or damage.
    private static func diagnoseFirstPage(_ raw: UnsafeRawBufferPointer, pageCount: Int, hmac: HMACSHA224) -> RealmFileError {
        if hasPlainHeader(raw) { return notEncrypted }
        switch check(raw, page: 0, hmac: hmac) {
        case .neverWritten:
            return failure("the IV entry of page 0 (the file header) is empty: not an encrypted Realm file, or damaged")
        case .zeroFilled:
            return failure("page 0 (the file header) is all zeros: the file is damaged")
        default:
            break
        }
        // A wrong key fails every page; a damaged header page fails alone.
        var probed = 0
        for page in 1..<max(pageCount, 1) where probed < pagesProbedForWrongKey {
            switch check(raw, page: page, hmac: hmac) {
            case .verified:
                return failure("page 0 (the file header) fails its HMAC check while other pages pass: the file is damaged")
            case .neverWritten, .zeroFilled:
                continue
            case .interruptedFirstWrite, .mismatch:
                probed += 1
            }
        }
        return failure("the encryption key is wrong (page 0 fails its HMAC-SHA224 check with it), or the file is not an encrypted Realm file")
    }
}

/// The pages of a decrypted file that could not be decrypted. realm-core fails a read of such a page, not the
/// open, and so does this reader: a Realm file may hold never-written pages in its free space.
struct UnreadablePages: Sendable {
    enum State: UInt8, Sendable {
        case readable, neverWritten, interruptedFirstWrite, hmacMismatch
    }

    let states: [State]

    func check(_ offset: Int, _ length: Int) throws(RealmFileError) {
        let pageSize = RealmEncryption.pageSize
        let first = offset / pageSize
        let last = min((offset + max(length, 1) - 1) / pageSize, states.count - 1)
        guard first <= last else { return }
        for page in first...last where states[page] != .readable {
            let what = switch states[page] {
            case .neverWritten: "was never written (its IV entry is empty)"
            case .interruptedFirstWrite: "fails its HMAC check and has no earlier version (damaged, or its first write was interrupted)"
            default: "fails its HMAC check in both IV slots (damaged)"
            }
            throw RealmEncryption.failure("page \(page) (bytes \(page * pageSize)..<\((page + 1) * pageSize)) \(what), and the file needs bytes \(offset)..<\(offset + length)")
        }
    }
}
