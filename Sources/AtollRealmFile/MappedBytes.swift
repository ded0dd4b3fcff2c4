import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read-only bytes of a Realm file: a private memory mapping of the file, an owned copy of in-memory bytes, or
/// the decrypted contents of an encrypted file.
///
/// The pointer stays valid for the lifetime of the object; nothing writes through it once it is built.
final class MappedBytes: @unchecked Sendable {
    let base: UnsafeRawPointer?
    let count: Int
    /// For an encrypted file: decrypts pages as reads need them (`base` is nil then).
    let decryptor: PageDecryptor?
    private let release: @Sendable (UnsafeMutableRawPointer?, Int) -> Void

    private init(base: UnsafeMutableRawPointer?, count: Int, decryptor: PageDecryptor? = nil,
                 release: @escaping @Sendable (UnsafeMutableRawPointer?, Int) -> Void) {
        self.base = UnsafeRawPointer(base)
        self.count = count
        self.decryptor = decryptor
        self.release = release
    }

    /// The logical bytes of an encrypted file, decrypted page by page as they are read.
    static func decrypting(_ decryptor: PageDecryptor) -> MappedBytes {
        MappedBytes(base: nil, count: decryptor.logicalSize, decryptor: decryptor, release: { _, _ in })
    }

    deinit { release(UnsafeMutableRawPointer(mutating: base), count) }

    /// Maps the file at `path` read-only.
    static func map(path: String) throws(RealmFileError) -> MappedBytes {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .fileAccess(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileAccess(path: path, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .fileAccess(path: path, reason: "not a regular file") }
        let size = Int(info.st_size)
        if size == 0 { return MappedBytes(base: nil, count: 0, release: { _, _ in }) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw .fileAccess(path: path, reason: "mmap failed: \(String(cString: strerror(errno)))")
        }
        return MappedBytes(base: address, count: size, release: { pointer, length in
            if let pointer { munmap(pointer, length) }
        })
    }

    /// Copies `data` into an owned buffer (used for in-memory files and tests).
    static func copy(_ data: Data) -> MappedBytes {
        guard !data.isEmpty else { return MappedBytes(base: nil, count: 0, release: { _, _ in }) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: data.count, alignment: 8)
        data.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: data.count)
        return MappedBytes(base: buffer, count: data.count, release: { pointer, _ in pointer?.deallocate() })
    }

    /// Throws when `offset..<offset+length` (already known to lie inside the bytes) touches a page of a decrypted
    /// file that could not be decrypted.
    @inline(__always)
    func checkReadable(_ offset: Int, _ length: Int) throws(RealmFileError) {
        if let decryptor { try decryptor.check(offset, length) }
    }

    /// Little-endian unsigned integer of `size` (1, 2, 4 or 8) bytes at `offset`; the caller has checked the bounds.
    @inline(__always)
    func uint(at offset: Int, size: Int) -> UInt64 {
        if let decryptor { return decryptor.uint(at: offset, size: size) }
        let base = base!
        switch size {
        case 1: return UInt64(base.load(fromByteOffset: offset, as: UInt8.self))
        case 2: return UInt64(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case 4: return UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        default: return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
    }

    @inline(__always)
    func byte(at offset: Int) -> UInt8 {
        if let decryptor { return UInt8(truncatingIfNeeded: decryptor.uint(at: offset, size: 1)) }
        return base!.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The bytes in `offset..<offset+length`; the caller has checked the bounds (and, for an encrypted file,
    /// that they can be decrypted).
    func span(_ offset: Int, _ length: Int) -> ByteSpan {
        guard length > 0 else { return .empty }
        if let decryptor { return decryptor.span(offset, length) }
        guard let base else { return .empty }
        return ByteSpan(UnsafeRawBufferPointer(start: base + offset, count: length))
    }

    /// The whole mapping (plain files).
    var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: base == nil ? 0 : count) }
}
