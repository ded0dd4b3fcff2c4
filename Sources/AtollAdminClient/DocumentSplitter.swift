import Foundation

/// Cuts a mongoexport file into its documents as bytes arrive: one document a line (the default),
/// or one JSON array of documents (`--jsonArray`). Pure; memory is bounded by the longest
/// document (`maxDocumentBytes`), never by the file.
///
/// ```swift
/// var splitter = DocumentSplitter()
/// for document in try splitter.feed(chunk) { … }     // each a complete document's bytes
/// try splitter.finish()                                // refuses a truncated last document
/// ```
public struct DocumentSplitter: Sendable {
    /// What the splitter could not cut, with the byte offset in the file.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int64
        public var message: String
        public var description: String { "\(message) (byte \(offset))" }
    }

    /// One document's bytes and where it starts and ends in the file.
    public struct Piece: Sendable, Hashable {
        public var bytes: [UInt8]
        public var start: Int64
        /// The offset just after the document (and its separator): where to resume after it.
        public var end: Int64
    }

    public let maxDocumentBytes: Int
    /// The offset of the next byte `feed` reads.
    public private(set) var offset: Int64
    private var current: [UInt8] = []
    private var currentStart: Int64 = 0
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// Whether the file is one JSON array (decided by its first non-space byte).
    private var isArray: Bool?
    private var arrayClosed = false
    /// Whether the file turned out to be one JSON array (nil before its first document).
    public var isArrayFile: Bool? { isArray }
    /// A document longer than the limit: its bytes are skipped up to its end, and it is reported.
    private var oversized = false

    public init(maxDocumentBytes: Int = 4 << 20, startingAt offset: Int64 = 0, isArray: Bool? = nil) {
        self.maxDocumentBytes = maxDocumentBytes
        self.offset = offset
        self.isArray = isArray
        // Resuming inside an array: the opening bracket is behind.
    }

    /// The documents `bytes` completes. An oversized document comes back as a piece with no bytes
    /// (the caller refuses it); malformed framing throws.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> [Piece] {
        var pieces: [Piece] = []
        for byte in bytes {
            defer { offset += 1 }
            if depth == 0 && !inString {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: continue
                case UInt8(ascii: "["):
                    if isArray == nil { isArray = true; continue }
                    if isArray == true, depth == 0, current.isEmpty, !arrayClosed { begin(); break }
                    throw Failure(offset: offset, message: "a document must be a JSON object")
                case UInt8(ascii: ","):
                    guard isArray == true else { throw Failure(offset: offset, message: "',' between documents outside an array") }
                    continue
                case UInt8(ascii: "]"):
                    guard isArray == true, !arrayClosed else { throw Failure(offset: offset, message: "an unexpected ']'") }
                    arrayClosed = true
                    continue
                case UInt8(ascii: "{"):
                    if isArray == nil { isArray = false }
                    guard !arrayClosed else { throw Failure(offset: offset, message: "text after the array") }
                    begin()
                default:
                    throw Failure(offset: offset, message: "expected a document ('{')")
                }
            }
            append(byte)
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    pieces.append(Piece(bytes: oversized ? [] : current, start: currentStart, end: offset + 1))
                    current = []
                    oversized = false
                }
            default: break
            }
        }
        return pieces
    }

    private mutating func begin() {
        currentStart = offset
        current = []
        oversized = false
    }

    private mutating func append(_ byte: UInt8) {
        guard !oversized else { return }
        if current.count >= maxDocumentBytes {
            oversized = true
            current = []
            return
        }
        current.append(byte)
    }

    /// Ends the file: a document cut short is an error.
    public func finish() throws(Failure) {
        if depth != 0 || inString { throw Failure(offset: offset, message: "the file ends inside a document") }
    }
}
