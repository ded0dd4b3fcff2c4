import Foundation

/// Cuts a `mongodump` `.bson` file (documents one after another, each starting with its int32
/// little-endian length) into its documents as bytes arrive. Memory is bounded by the longest
/// document; a longer one is skipped and comes back as a piece with no bytes. A length that
/// cannot be a document's (under 5) ends the file: nothing after it can be found again.
public struct BSONSplitter: Sendable {
    public let maxDocumentBytes: Int
    public private(set) var offset: Int64
    private var current: [UInt8] = []
    private var currentStart: Int64 = 0
    private var expected: Int?
    private var skipping = 0

    public init(maxDocumentBytes: Int = 4 << 20, startingAt offset: Int64 = 0) {
        self.maxDocumentBytes = maxDocumentBytes
        self.offset = offset
    }

    public mutating func feed(_ bytes: some Collection<UInt8>) throws(DocumentSplitter.Failure) -> [DocumentSplitter.Piece] {
        var pieces: [DocumentSplitter.Piece] = []
        for byte in bytes {
            defer { offset += 1 }
            if skipping > 0 {
                skipping -= 1
                if skipping == 0 { pieces.append(.init(bytes: [], start: currentStart, end: offset + 1)) }
                continue
            }
            if current.isEmpty { currentStart = offset }
            current.append(byte)
            if expected == nil, current.count == 4 {
                let length = Int(Int32(bitPattern: current.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
                guard length >= 5 else { throw .init(offset: currentStart, message: "a BSON document length of \(length)") }
                if length > maxDocumentBytes {
                    skipping = length - 4
                    current = []
                    continue
                }
                expected = length
            }
            if let expected, current.count == expected {
                pieces.append(.init(bytes: current, start: currentStart, end: offset + 1))
                current = []
                self.expected = nil
            }
        }
        return pieces
    }

    public func finish() throws(DocumentSplitter.Failure) {
        if !current.isEmpty || skipping > 0 { throw .init(offset: offset, message: "the file ends inside a BSON document") }
    }
}
