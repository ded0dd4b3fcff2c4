/// Names one bound realm on a connection. The client picks it (unique among the sessions it has
/// bound on that connection); every session message carries it.
public struct SessionID: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByIntegerLiteral {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { rawValue = value }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
}

/// Identifies one generation of a realm's server history. It changes when sync is terminated and
/// enabled again or when history is restored from a backup; a client holding another epoch than the
/// server's must run a client reset. ``none`` is what a client holds before its first ident.
public struct SyncEpoch: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { rawValue = value }
    public static let none = SyncEpoch(rawValue: 0)
    public var description: String { "epoch \(rawValue)" }
}

/// A client file's identity in one realm's history, assigned by the server. The salt is a random
/// secret the server hands out with the ident, so that a client cannot claim another's ident.
/// ``unassigned`` (0, 0) asks the server for a new one.
public struct FileIdent: Hashable, Sendable, CustomStringConvertible {
    public var ident: Int64
    public var salt: Int64
    public init(ident: Int64, salt: Int64) {
        self.ident = ident
        self.salt = salt
    }
    public static let unassigned = FileIdent(ident: 0, salt: 0)
    public var isAssigned: Bool { ident != 0 }
    public var description: String { "file ident \(ident)" }
}
