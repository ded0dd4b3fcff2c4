/// Why a remote data access request (`collection.find(filter:)` …, docs/protocol.md §1.6) was
/// refused: a code to match, and what was wrong. Messages never echo values beyond a short prefix.
package struct RemoteError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// The body is not what the action takes (not JSON, a member of the wrong kind …).
        case badRequest
        /// An operator, stage or form Atoll does not serve (`$where`, `$regex`, `$lookup` …).
        case unsupported
        /// The app has no such database, service or collection (or no synced data yet).
        case collectionNotFound
        /// The app's rules do not let the user do this.
        case permissionDenied
        /// The request goes past a limit (documents examined or written, filter size).
        case limitExceeded
        /// An insert names a primary key that exists.
        case duplicateKey
        /// A document the collection's schema cannot hold.
        case invalidDocument
    }
    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }
}

/// What one remote data access request may use. Every bound is the caller's to hit, never the
/// server's: past one the request is refused with ``RemoteError/Code/limitExceeded``.
package struct RemoteLimits: Sendable, Hashable {
    /// Bytes of a request's body.
    package var maxRequestBytes = 1 << 20
    /// Nesting of the body's JSON (a filter's `$and`/`$or` nest in it).
    package var maxDepth = 24
    /// JSON values in a filter, sort, projection or update (operators and operands).
    package var maxFilterNodes = 2_000
    /// Objects one request may look at.
    package var maxExamined = 100_000
    /// Documents one answer may carry.
    package var maxReturned = 1_000
    /// Objects one request may insert, change or delete.
    package var maxWritten = 1_000
    /// Stages of an aggregation pipeline.
    package var maxStages = 16

    package init() {}

    /// The JSON parser's limits for a body.
    package var json: JSONLimits {
        var limits = JSONLimits()
        limits.maxDepth = maxDepth
        limits.maxDocumentBytes = maxRequestBytes
        limits.maxStringBytes = maxRequestBytes
        limits.maxElements = max(maxWritten, maxFilterNodes)
        return limits
    }
}
