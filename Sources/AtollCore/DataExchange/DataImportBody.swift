/// The compact body of one `atoll data import` batch (`Content-Type: application/vnd.atoll.import-batch`):
/// the documents' bytes as the file holds them, each behind its length, so neither side escapes,
/// unescapes or re-decodes them as JSON strings. The server parses each document once, as
/// Extended JSON, where it types it.
///
/// ```
/// "AIB1"  header length (u32, big-endian)  header (JSON: type, partitionKey?, realm?, schema?)
///         document count (u32)  then per document: length (u32)  bytes
/// ```
///
/// ```swift
/// var body = DataImportBody.Writer(header: headerJSON)
/// body.append(documentBytes)
/// let bytes = body.finish()
/// let batch = try DataImportBody.read(bytes, maxDocuments: 2_000)   // header + document ranges
/// ```
///
/// Every length is checked against what is left before it is used: a hostile body costs no more
/// than its own size, and what does not frame exactly is refused with ``DataImportError/Code/malformedBody``.
package enum DataImportBody {
    /// The first four bytes.
    package static let magic: [UInt8] = Array("AIB1".utf8)
    /// The media type the admin API recognises this body by.
    package static let contentType = "application/vnd.atoll.import-batch"
    /// The most bytes the header (JSON with the schema) may have.
    package static let maxHeaderBytes = 1 << 20

    /// A body read: where its header and each document are in the bytes given.
    package struct Batch: Sendable, Hashable {
        package var header: Range<Int>
        package var documents: [Range<Int>]
    }

    /// Builds a body as documents arrive.
    package struct Writer: Sendable {
        package private(set) var bytes: [UInt8]
        package private(set) var count = 0
        private let countOffset: Int

        package init(header: some Collection<UInt8>, reservingCapacity capacity: Int = 0) {
            bytes = []
            bytes.reserveCapacity(capacity + header.count + 12)
            bytes += DataImportBody.magic
            Self.appendLength(header.count, to: &bytes)
            bytes += header
            countOffset = bytes.count
            Self.appendLength(0, to: &bytes)
        }

        /// Bytes of documents so far (headers and lengths left out).
        package var documentBytes: Int { bytes.count - countOffset - 4 - 4 * count }

        package mutating func append(_ document: some Collection<UInt8>) {
            Self.appendLength(document.count, to: &bytes)
            bytes += document
            count += 1
        }

        /// The finished body.
        package func finish() -> [UInt8] {
            var out = bytes
            let n = UInt32(count)
            out[countOffset] = UInt8(n >> 24)
            out[countOffset + 1] = UInt8(truncatingIfNeeded: n >> 16)
            out[countOffset + 2] = UInt8(truncatingIfNeeded: n >> 8)
            out[countOffset + 3] = UInt8(truncatingIfNeeded: n)
            return out
        }

        static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
            let n = UInt32(length)
            bytes += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        }
    }

    /// Reads a body's framing (not the documents: the import parses each one and refuses it alone).
    /// - Throws: ``DataImportError`` with ``DataImportError/Code/malformedBody`` (bad magic, a
    ///   length past the end, bytes after the last document, more than `maxDocuments`) or
    ///   ``DataImportError/Code/tooLarge`` (a header over ``maxHeaderBytes``, a document over
    ///   `maxDocumentBytes`).
    package static func read(_ bytes: [UInt8], maxDocuments: Int, maxDocumentBytes: Int = JSONLimits().maxDocumentBytes)
        throws(DataImportError) -> Batch {
        var position = 0
        func length(_ what: String) throws(DataImportError) -> Int {
            guard bytes.count - position >= 4 else {
                throw DataImportError(.malformedBody, "the body ends inside the length of \(what) (byte \(position))")
            }
            let n = Int(bytes[position]) << 24 | Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            position += 4
            return n
        }
        guard bytes.count >= magic.count, bytes[0..<magic.count].elementsEqual(magic) else {
            throw DataImportError(.malformedBody, "the body does not start with the import batch's magic bytes")
        }
        position = magic.count
        let headerLength = try length("the header")
        guard headerLength <= maxHeaderBytes else {
            throw DataImportError(.tooLarge, "a header of \(headerLength) bytes, more than \(maxHeaderBytes)")
        }
        guard bytes.count - position >= headerLength else { throw DataImportError(.malformedBody, "the header runs past the body's end") }
        let header = position..<position + headerLength
        position += headerLength
        let count = try length("the document count")
        guard count <= maxDocuments else {
            throw DataImportError(.malformedBody, "a batch holds at most \(maxDocuments) documents, this one says \(count)")
        }
        var documents: [Range<Int>] = []
        documents.reserveCapacity(count)
        for index in 0..<count {
            let n = try length("document \(index)")
            guard n <= maxDocumentBytes else {
                throw DataImportError(.tooLarge, "document \(index) has \(n) bytes, more than \(maxDocumentBytes)")
            }
            guard bytes.count - position >= n else { throw DataImportError(.malformedBody, "document \(index) runs past the body's end") }
            documents.append(position..<position + n)
            position += n
        }
        guard position == bytes.count else {
            throw DataImportError(.malformedBody, "\(bytes.count - position) bytes after the last document")
        }
        return Batch(header: header, documents: documents)
    }
}
