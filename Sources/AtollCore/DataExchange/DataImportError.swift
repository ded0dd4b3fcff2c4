import Foundation

/// Why a document of a data import (`atoll data import`) was refused: a code to match, and where.
///
/// Messages name the field path and the kind of value, never the value itself beyond a short
/// prefix, so a report of a hostile file stays small.
package struct DataImportError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable, Codable {
        /// Not JSON (or not one JSON value).
        case malformedJSON
        /// Nested deeper than ``JSONLimits/maxDepth``.
        case tooDeep
        /// A document, string or collection larger than ``JSONLimits`` allows.
        case tooLarge
        /// The document is not a JSON object.
        case notADocument
        /// The type to import into is not in the realm's schema, or cannot take top-level objects.
        case unknownType
        /// No `_id` (primary key) in the document.
        case missingPrimaryKey
        /// A value the property's type cannot hold.
        case wrongType
        /// An Extended JSON wrapper (`$oid`, `$date` …) with a malformed body.
        case badExtendedJSON
        /// A partition key value that is not a string, integer, ObjectId, UUID or null.
        case badPartition
        /// A batch's compact body (``DataImportBody``) that does not frame: the whole batch is refused.
        case malformedBody
    }
    package let code: Code
    package let message: String
    /// Where in the document, e.g. `address.lines[2]`; empty for the whole document.
    package let path: String

    package init(_ code: Code, _ message: String, path: String = "") {
        self.code = code
        self.message = message
        self.path = path
    }

    package var description: String { path.isEmpty ? "\(code.rawValue): \(message)" : "\(code.rawValue) at \(path): \(message)" }
}

/// Bounds on one document, so that a hostile file costs bounded memory and time per document.
package struct JSONLimits: Sendable, Hashable {
    /// Nesting of arrays and objects.
    package var maxDepth = 64
    /// Bytes of one document.
    package var maxDocumentBytes = 4 << 20
    /// Bytes of one string.
    package var maxStringBytes = 1 << 20
    /// Elements of one array or members of one object.
    package var maxElements = 100_000

    package init() {}
}
