/// An upload the server cannot integrate, with a code callers can match.
///
/// ```swift
/// do { _ = try history.integrate(batch) }
/// catch let error where error.code == .missingOwnChangeset { /* the client must download first */ }
/// ```
package struct MergeError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// The upload's base server version is negative or newer than the server's history.
        case badBaseVersion
        /// The upload's client versions do not increase.
        case nonIncreasingClientVersions
        /// The server integrated one of the client's changesets after the upload's base, and the
        /// upload does not carry it: the client's context is unknown. The client must download
        /// (and so see its changeset come back) before it uploads again.
        case missingOwnChangeset
        /// A changeset breaks the realm's schema: an unknown type or property, a value of the wrong
        /// type, a property redefined with another type (``HistorySchema/validate(_:)``).
        case schemaViolation
        /// A changeset cannot apply to the realm's current state: a list position out of range, an
        /// object or container that does not exist, a value over the size limits
        /// (``ReplicaState/validate(_:limits:)``).
        case invalidInstruction
        /// The client's copy went back in time (restored from a backup, or commits lost in a power
        /// loss): it uploads a client version the server integrated with other content (another
        /// commit time), or one the server never had although it holds newer versions of the file.
        /// Taking it as a duplicate would drop a new write silently: the client must reset.
        case clientHistoryDiverged
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "Merge error (\(code.rawValue)): \(message)" }
}
