/// Names one bound realm on a connection. The client picks it (unique among the sessions it has
/// bound on that connection); every session message carries it.
package struct SessionID: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByIntegerLiteral {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package init(integerLiteral value: UInt64) { rawValue = value }
    package static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
}

/// Identifies one generation of a realm's server history. It changes when sync is terminated and
/// enabled again or when history is restored from a backup; a client holding another epoch than the
/// server's must run a client reset. ``none`` is what a client holds before its first ident.
package struct SyncEpoch: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(integerLiteral value: UInt64) { rawValue = value }
    package static let none = SyncEpoch(rawValue: 0)
    package var description: String { "epoch \(rawValue)" }
}

/// A client file's identity in one realm's history, assigned by the server. The salt is a random
/// secret the server hands out with the ident, so that a client cannot claim another's ident.
/// ``unassigned`` (0, 0) asks the server for a new one.
package struct FileIdent: Hashable, Sendable, CustomStringConvertible {
    package var ident: Int64
    package var salt: Int64
    package init(ident: Int64, salt: Int64) {
        self.ident = ident
        self.salt = salt
    }
    package static let unassigned = FileIdent(ident: 0, salt: 0)
    package var isAssigned: Bool { ident != 0 }
    package var description: String { "file ident \(ident)" }
}
