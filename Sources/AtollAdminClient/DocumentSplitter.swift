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
    ///
    /// The bytes are scanned in one contiguous copy (a `Data`'s own iteration goes through its
    /// storage byte by byte), and a document's bytes are copied as whole runs, not byte by byte.
    public mutating func feed(_ input: some Collection<UInt8>) throws(Failure) -> [Piece] {
        let bytes = Array(input)
        let n = bytes.count
        var pieces: [Piece] = []
        // Where the current document's bytes in this chunk start (0: it began in an earlier one).
        var segment: Int? = depth > 0 || inString ? 0 : nil
        var i = 0
        while i < n {
            let byte = bytes[i]
            if depth == 0 && !inString {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1; continue
                case UInt8(ascii: "["):
                    if isArray == nil { isArray = true; i += 1; continue }
                    if isArray == true, !arrayClosed { begin(at: i, &segment); break }
                    throw Failure(offset: offset + Int64(i), message: "a document must be a JSON object")
                case UInt8(ascii: ","):
                    guard isArray == true else { throw Failure(offset: offset + Int64(i), message: "',' between documents outside an array") }
                    i += 1
                    continue
                case UInt8(ascii: "]"):
                    guard isArray == true, !arrayClosed else { throw Failure(offset: offset + Int64(i), message: "an unexpected ']'") }
                    arrayClosed = true
                    i += 1
                    continue
                case UInt8(ascii: "{"):
                    if isArray == nil { isArray = false }
                    guard !arrayClosed else { throw Failure(offset: offset + Int64(i), message: "text after the array") }
                    begin(at: i, &segment)
                default:
                    throw Failure(offset: offset + Int64(i), message: "expected a document ('{')")
                }
            }
            if inString {
                // The byte after an escape that ended the last chunk.
                if escaped { escaped = false; i += 1; continue }
                // To the string's end, or to the escape to step over.
                while i < n, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") { i += 1 }
                guard i < n else { break }
                if bytes[i] == UInt8(ascii: "\\") {
                    if i + 1 < n { i += 2 } else { escaped = true; i += 1 }
                    continue
                }
                inString = false
                i += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    take(bytes, from: segment ?? 0, to: i + 1)
                    segment = nil
                    pieces.append(Piece(bytes: oversized ? [] : current, start: currentStart, end: offset + Int64(i) + 1))
                    current = []
                    oversized = false
                }
            default: break
            }
            i += 1
        }
        if let segment { take(bytes, from: segment, to: n) }
        offset += Int64(n)
        return pieces
    }

    /// A document starts at `i` of the chunk.
    private mutating func begin(at i: Int, _ segment: inout Int?) {
        currentStart = offset + Int64(i)
        current = []
        oversized = false
        segment = i
    }

    /// Appends `bytes[from..<to]` to the current document, or drops it once the document is
    /// longer than the limit.
    private mutating func take(_ bytes: [UInt8], from: Int, to: Int) {
        guard !oversized, from < to else { return }
        if current.count + (to - from) > maxDocumentBytes {
            oversized = true
            current = []
            return
        }
        current += bytes[from..<to]
    }

    /// Ends the file: a document cut short is an error.
    public func finish() throws(Failure) {
        if depth != 0 || inString { throw Failure(offset: offset, message: "the file ends inside a document") }
    }
}
