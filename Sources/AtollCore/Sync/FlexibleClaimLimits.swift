/// What one flexible-sync session may ask of the server: how many objects it may claim to hold
/// (`heldObjects`) and how big its subscription set may be (`queryChange`).
///
/// ``excess(in:)`` reads an encoded client message only as far as it needs to tell: the counts
/// come first, so a claim of a million ids is refused from its header, and no more than a limit's
/// worth of the message is ever read (nothing is kept), before the message is decoded.
///
/// ```swift
/// let limits = FlexibleClaimLimits(heldObjects: 250_000, queries: 1_000, queryBytes: 256 << 10)
/// if let refusal = limits.excess(in: bytes) { /* refuse refusal.session: refusal.excess */ }
/// ```
package struct FlexibleClaimLimits: Sendable, Hashable {
    package var heldObjects: Int
    package var queries: Int
    package var queryBytes: Int

    package init(heldObjects: Int, queries: Int, queryBytes: Int) {
        self.heldObjects = heldObjects
        self.queries = queries
        self.queryBytes = queryBytes
    }

    /// Which limit a message goes past.
    package enum Excess: Sendable, Hashable, CustomStringConvertible {
        /// A `heldObjects` message claiming more than ``heldObjects`` objects (at least `count`).
        case heldObjects(count: Int, limit: Int)
        /// A subscription set of `count` queries, more than ``queries``.
        case queries(count: Int, limit: Int)
        /// A subscription set whose type names and query texts pass ``queryBytes`` (at least `bytes`).
        case queryBytes(bytes: Int, limit: Int)

        /// The configuration name of the limit, for metrics and logs.
        package var limitName: String {
            switch self {
            case .heldObjects: "heldObjectsPerSession"
            case .queries: "queriesPerSubscriptionSet"
            case .queryBytes: "querySetBytes"
            }
        }

        package var description: String {
            switch self {
            case .heldObjects(let count, let limit):
                "the held objects claim more than \(limit) objects (\(count) at least); a session may claim at most \(limit)"
            case .queries(let count, let limit):
                "the subscription set has \(count) queries; at most \(limit) are allowed"
            case .queryBytes(let bytes, let limit):
                "the subscription set's queries take more than \(limit) bytes (\(bytes) at least)"
            }
        }
    }

    /// A message past a limit.
    package struct Refusal: Sendable, Hashable {
        package var session: SessionID
        package var excess: Excess
        /// The version of a refused subscription set (nil for held objects).
        package var querySetVersion: Int64?
    }

    /// Counts are taken as declared, not checked against the bytes at hand: `bytes` may be the
    /// first chunk of a message whose elements are still to come (the bound only keeps sums small).
    static let declaredCountLimit = 1 << 40

    /// The session and the limit an encoded `heldObjects` or `queryChange` message goes past; nil
    /// when it stays within them, is another message, or is malformed (decoding reports that).
    /// `bytes` may be the start of the message only: a count past a limit is found from it.
    package func excess(in bytes: some Collection<UInt8>) -> Refusal? {
        var r = BinaryReader(bytes)
        do {
            switch MessageTag(rawValue: try r.byte()) {
            case .heldObjects?:
                let session = try r.session()
                let types = try r.count(limit: Self.declaredCountLimit)
                var claimed = 0
                for _ in 0..<types {
                    _ = try r.blob()
                    let count = try r.count(limit: Self.declaredCountLimit)
                    claimed += count
                    if claimed > heldObjects { return Refusal(session: session, excess: .heldObjects(count: claimed, limit: heldObjects)) }
                    for _ in 0..<count { _ = try Value.decode(from: &r) }
                }
                return nil
            case .queryChange?:
                let session = try r.session()
                let version = try r.int()
                let count = try r.count(limit: Self.declaredCountLimit)
                if count > queries {
                    return Refusal(session: session, excess: .queries(count: count, limit: queries), querySetVersion: version)
                }
                var total = 0
                for _ in 0..<(count * 2) {
                    total += try r.blob().count
                    if total > queryBytes {
                        return Refusal(session: session, excess: .queryBytes(bytes: total, limit: queryBytes), querySetVersion: version)
                    }
                }
                return nil
            default:
                return nil
            }
        } catch {
            return nil
        }
    }
}
