import AtollCore

/// The realms a node serves (sessions bound to them, or their state cached), shared between the
/// sync coordinator, which keeps it, and the store's change listener, which reads it for every
/// announcement: a history announcement of a realm the node does not serve is dropped as soon as
/// its header is read, before its seal is checked or its entries decoded, and never reaches the
/// coordinator's actor (with N nodes, N − 1 of every N announcements a node hears are others').
///
/// ```swift
/// let interest = RealmInterest()
/// interest.set(realmID, served: true)     // the coordinator, as a session binds
/// interest.admits(realmID)                // the listener, per line: true
/// ```
///
/// Dropping is safe whenever the coordinator marks a realm served before it reads the realm's
/// history (a session's catch-up, a state's load): what was announced before was committed before,
/// so that read sees it.
package final class RealmInterest: Sendable {
    private let served = Locked<Set<Int64>>([])
    private let counts = Locked(Counts())

    /// What the listener did with the history announcements it heard (for `/metrics` and tests).
    package struct Counts: Sendable, Equatable {
        /// Lines of realms not served here, dropped from their header.
        package var skipped = 0
        /// This node's own lines, dropped from their header.
        package var own = 0
        /// Lines read in full (checked, decoded, acted on).
        package var read = 0
    }

    /// Told `skipped`, `own` or `read` for every history announcement heard (`/metrics`).
    private let record: (@Sendable (_ outcome: String) -> Void)?

    package init(record: (@Sendable (_ outcome: String) -> Void)? = nil) { self.record = record }

    /// Whether announcements of `realmID` are acted on.
    package func admits(_ realmID: Int64) -> Bool { served.withLock { $0.contains(realmID) } }

    /// Marks `realmID` as served here or not.
    package func set(_ realmID: Int64, served isServed: Bool) {
        served.withLock { realms in
            if isServed { realms.insert(realmID) } else { realms.remove(realmID) }
        }
    }

    /// The realms served here now.
    package var realms: Set<Int64> { served.withLock { $0 } }

    /// What the listener has done so far.
    package var heard: Counts { counts.withLock { $0 } }

    /// What became of one history announcement (the label of its count in `/metrics`).
    enum Outcome: String {
        case skipped, own, read
    }

    func count(_ outcome: Outcome) {
        counts.withLock { counts in
            switch outcome {
            case .skipped: counts.skipped += 1
            case .own: counts.own += 1
            case .read: counts.read += 1
            }
        }
        record?(outcome.rawValue)
    }
}

/// The fields at the front of a change-channel line, read without copying or decoding the rest:
/// `[mac TAB] node TAB time TAB kind TAB realm …` (``StoreChange/payload``).
struct AnnouncementHeader: Equatable {
    /// The sending node's id.
    var node: Substring
    /// The realm of a history line (`h`/`H`), nil for every other kind.
    var historyRealmID: Int64?
}

extension AnnouncementHeader {
    /// The header of `line`, sealed (a MAC first) or not; nil when it does not have one (such a
    /// line goes on to the full check, which rejects and counts it).
    init?(_ line: String, sealed: Bool) {
        var fields = line.utf8[...]
        func next() -> Substring.UTF8View? {
            guard let tab = fields.firstIndex(of: UInt8(ascii: "\t")) else { return nil }
            defer { fields = fields[fields.index(after: tab)...] }
            return fields[..<tab]
        }
        if sealed { guard next() != nil else { return nil } }
        guard let node = next(), next() != nil, let kind = next() ?? (fields.isEmpty ? nil : fields) else { return nil }
        self.node = Substring(node)
        guard kind.count == 1, kind.first == UInt8(ascii: "h") || kind.first == UInt8(ascii: "H") else {
            historyRealmID = nil
            return
        }
        // The realm: up to the next tab (a line of a bad shape fails the full check later).
        let realm = fields.prefix { $0 != UInt8(ascii: "\t") }
        guard let realmID = Int64(Substring(realm)) else { return nil }
        historyRealmID = realmID
    }
}
