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

    /// Reads the encrypted Realm file in `physical` with `key`: its logical bytes, decrypted page by page as
    /// reads need them (at most ``PageDecryptor/cachedPages`` pages are held at once, never the whole file).
    ///
    /// Page 0 (the file header) is authenticated and decrypted now: if it fails, the key is reported wrong
    /// (or the file damaged or not encrypted). Another page that cannot be decrypted fails the read that needs
    /// it, not the open, as in realm-core.
    static func decrypt(_ physical: MappedBytes, key: Data) throws(RealmFileError) -> MappedBytes {
        guard key.count == keySize else {
            throw .invalidDatabase(reason: "encryption key must be \(keySize) bytes (32 bytes of AES-256 key, then 32 of HMAC-SHA224 key), not \(key.count)")
        }
        let raw = physical.raw
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
        let pageCount = logicalSize(physicalSize: size) / pageSize
        guard case .verified = check(raw, page: 0, hmac: hmac) else { throw diagnoseFirstPage(raw, pageCount: pageCount, hmac: hmac) }
        let decryptor = PageDecryptor(physical: physical, aesKey: SymmetricKey(data: keyBytes[0..<32]), hmac: hmac, pageCount: pageCount)
        // The HMAC authenticates with the key's second half only: a wrong first half (the AES key) passes it
        // and decrypts to noise, which the header's mnemonic exposes.
        let header = try decryptor.span(0, FileHeader.size, checking: true)
        guard header.withContiguousStorageIfAvailable({ hasPlainHeader(UnsafeRawBufferPointer($0)) }) == true else {
            throw failure("the encryption key is wrong (its HMAC half, bytes 32–63, matches, but page 0 does not decrypt to a Realm header with its AES half, bytes 0–31), or the file is not a Realm file")
        }
        return MappedBytes.decrypting(decryptor)
    }

    /// Decrypts verified page `page` of `raw` into `output` (4096 bytes).
    static func decryptPage(_ raw: UnsafeRawBufferPointer, page: Int, counter: UInt32, aesKey: SymmetricKey,
                            into output: UnsafeMutableRawPointer) throws(RealmFileError) {
        let offset = pageOffset(page: page)
        let plaintext: Data
        do {
            plaintext = try AES._CBC.decrypt(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + pageSize]), using: aesKey,
                                             iv: AES._CBC.IV(ivBytes: aesIV(counter: counter, page: page)), noPadding: true)
        } catch {
            throw failure("AES-CBC decryption of page \(page) failed: \(error)")
        }
        guard plaintext.count == pageSize else { throw failure("AES-CBC decryption of page \(page) returned \(plaintext.count) bytes") }
        plaintext.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: pageSize)
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

/// The decrypted pages of an encrypted file, made as reads need them and kept in a small cache, so that an
/// encrypted file is never in memory whole. A page that cannot be decrypted (never written, its first write
/// interrupted, or failing its HMAC check in both IV slots) fails the read that needs it, as in realm-core.
final class PageDecryptor: @unchecked Sendable {
    /// Pages held at once (1 MiB). A read holds on to the page (or copy) it returned as long as it uses it.
    static let cachedPages = 256

    enum State: UInt8 { case unknown, readable, neverWritten, interruptedFirstWrite, hmacMismatch }

    private let physical: MappedBytes
    private let aesKey: SymmetricKey
    private let hmac: HMACSHA224
    let pageCount: Int
    var logicalSize: Int { pageCount * RealmEncryption.pageSize }

    private let lock = NSLock()
    private var states: [State]
    private var cache: [Int: DecryptedPage] = [:]
    private var order: [Int] = []
    private var next = 0

    init(physical: MappedBytes, aesKey: SymmetricKey, hmac: HMACSHA224, pageCount: Int) {
        self.physical = physical
        self.aesKey = aesKey
        self.hmac = hmac
        self.pageCount = pageCount
        states = Array(repeating: .unknown, count: pageCount)
    }

    /// Pages in the cache now (tests).
    var cachedCount: Int { lock.withLock { cache.count } }

    /// Throws when `offset..<offset+length` touches a page that cannot be decrypted.
    func check(_ offset: Int, _ length: Int) throws(RealmFileError) {
        for page in pages(offset, length) { _ = try load(page) }
    }

    /// Little-endian integer of `size` bytes at `offset` (checked before: a page that cannot be read gives 0).
    func uint(at offset: Int, size: Int) -> UInt64 {
        let pageSize = RealmEncryption.pageSize
        var value: UInt64 = 0
        var index = 0
        while index < size {
            let position = offset + index
            guard let page = try? load(position / pageSize) else { return 0 }
            let start = position % pageSize
            let available = min(size - index, pageSize - start)
            for byte in 0..<available {
                value |= UInt64(page.bytes.load(fromByteOffset: start + byte, as: UInt8.self)) << (8 * UInt64(index + byte))
            }
            index += available
        }
        return value
    }

    /// The bytes of `offset..<offset+length`: within one page, that page's; across pages, a copy.
    func span(_ offset: Int, _ length: Int, checking: Bool = false) throws(RealmFileError) -> ByteSpan {
        let pageSize = RealmEncryption.pageSize
        let range = pages(offset, length)
        if range.count == 1 {
            let page = try load(range.lowerBound)
            return ByteSpan(UnsafeRawBufferPointer(start: page.bytes + offset % pageSize, count: length), owner: page)
        }
        let copy = OwnedBytes(count: length)
        var written = 0
        for index in range {
            let page = try load(index)
            let start = index == range.lowerBound ? offset % pageSize : 0
            let count = min(length - written, pageSize - start)
            (copy.bytes + written).copyMemory(from: page.bytes + start, byteCount: count)
            written += count
        }
        return ByteSpan(UnsafeRawBufferPointer(start: copy.bytes, count: length), owner: copy)
    }

    /// `span(_:_:checking:)` for ranges already checked.
    func span(_ offset: Int, _ length: Int) -> ByteSpan {
        (try? span(offset, length, checking: false)) ?? .empty
    }

    private func pages(_ offset: Int, _ length: Int) -> ClosedRange<Int> {
        let pageSize = RealmEncryption.pageSize
        let first = offset / pageSize
        let last = min((offset + max(length, 1) - 1) / pageSize, pageCount - 1)
        return first...max(first, last)
    }

    /// Page `page`, decrypted (from the cache, or now).
    private func load(_ page: Int) throws(RealmFileError) -> DecryptedPage {
        guard page >= 0, page < pageCount else {
            throw RealmEncryption.failure("page \(page) is outside the file's \(pageCount) pages")
        }
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[page] { return cached }
        let raw = physical.raw
        var counter: UInt32?
        switch states[page] {
        case .unknown, .readable:
            switch RealmEncryption.check(raw, page: page, hmac: hmac) {
            case .verified(let verified): counter = verified; states[page] = .readable
            case .zeroFilled: counter = nil; states[page] = .readable
            case .neverWritten: states[page] = .neverWritten
            case .interruptedFirstWrite: states[page] = .interruptedFirstWrite
            case .mismatch: states[page] = .hmacMismatch
            }
        default:
            break
        }
        guard states[page] == .readable else {
            let pageSize = RealmEncryption.pageSize
            let what = switch states[page] {
            case .neverWritten: "was never written (its IV entry is empty)"
            case .interruptedFirstWrite: "fails its HMAC check and has no earlier version (damaged, or its first write was interrupted)"
            default: "fails its HMAC check in both IV slots (damaged)"
            }
            throw RealmEncryption.failure("page \(page) (bytes \(page * pageSize)..<\((page + 1) * pageSize)) \(what)")
        }
        let decrypted = DecryptedPage()
        if let counter {
            try RealmEncryption.decryptPage(raw, page: page, counter: counter, aesKey: aesKey, into: decrypted.bytes)
        }
        if order.count < Self.cachedPages {
            order.append(page)
        } else {
            cache[order[next]] = nil
            order[next] = page
            next = (next + 1) % Self.cachedPages
        }
        cache[page] = decrypted
        return decrypted
    }
}

/// One decrypted 4096-byte page (zeros until written).
final class DecryptedPage: @unchecked Sendable {
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: RealmEncryption.pageSize, alignment: 8)
    init() { bytes.initializeMemory(as: UInt8.self, repeating: 0, count: RealmEncryption.pageSize) }
    deinit { bytes.deallocate() }
}

/// A copy of bytes that span pages.
final class OwnedBytes: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    init(count: Int) { bytes = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 8) }
    deinit { bytes.deallocate() }
}
