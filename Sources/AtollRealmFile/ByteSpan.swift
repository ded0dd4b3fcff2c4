/// Bytes of a Realm file that a read returns: a range of the file's memory mapping, or of a decrypted page
/// (or a copy, for a range across pages) that the span keeps alive as long as it is used.
///
/// A collection, so that the bytes are only ever reached while the span (and what owns them) exists.
struct ByteSpan: RandomAccessCollection {
    private let bytes: UnsafeRawBufferPointer
    /// What keeps `bytes` valid (a decrypted page, a copy), or nil for the mapping, which lives as long as the file.
    private let owner: (any AnyObject & Sendable)?

    init(_ bytes: UnsafeRawBufferPointer, owner: (any AnyObject & Sendable)? = nil) {
        self.bytes = bytes
        self.owner = owner
    }

    static var empty: ByteSpan { ByteSpan(UnsafeRawBufferPointer(start: nil, count: 0)) }

    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }

    subscript(position: Int) -> UInt8 {
        withExtendedLifetime(owner) { bytes[position] }
    }

    /// The first `length` bytes, as a span with the same owner.
    func prefixSpan(_ length: Int) -> ByteSpan {
        ByteSpan(UnsafeRawBufferPointer(rebasing: bytes[0..<length]), owner: owner)
    }

    func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withExtendedLifetime(owner) {
            try body(bytes.bindMemory(to: UInt8.self))
        }
    }
}
