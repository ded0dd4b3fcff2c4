/// The versions of the sync wire protocol, and how a client and a server agree on one.
///
/// The client offers a range in its ``ClientHello``; the server picks the highest version both
/// support, or answers an error with ``ServerErrorCode/unsupportedProtocolVersion``.
///
/// ```swift
/// let chosen = try ProtocolVersion.negotiate(offered: 1...3, supported: ProtocolVersion.supported)
/// ```
package enum ProtocolVersion {
    /// The version this build speaks best.
    ///
    /// - 1: dates in values are seconds since 1970 (value tag 7).
    /// - 2: dates are `Date`'s own seconds since 2001 (value tag 16), exact. A version-1 peer is
    ///   refused rather than translated for: it cannot hold the exact dates, so what it wrote back
    ///   (a date it read, a set element to erase) would silently differ from what others hold.
    package static let current: UInt32 = 2
    /// Every version this build can speak.
    package static let supported: ClosedRange<UInt32> = 2...2

    /// The highest version in both ranges.
    ///
    /// - Throws: ``ProtocolError`` with code ``ServerErrorCode/unsupportedProtocolVersion`` when the
    ///   ranges do not overlap; the message names both ranges.
    package static func negotiate(offered: ClosedRange<UInt32>, supported: ClosedRange<UInt32>)
        throws(ProtocolError) -> UInt32
    {
        guard offered.overlaps(supported) else {
            throw ProtocolError(
                .unsupportedProtocolVersion,
                "the client offers protocol versions \(offered.lowerBound)...\(offered.upperBound), "
                    + "the server speaks \(supported.lowerBound)...\(supported.upperBound)")
        }
        return min(offered.upperBound, supported.upperBound)
    }
}

extension ProtocolVersion {
    /// The client's check of the server's hello: the version must be one the client offered.
    ///
    /// - Throws: ``ProtocolError`` with ``ServerErrorCode/unsupportedProtocolVersion``.
    package static func accept(_ hello: ServerHello, offered: ClosedRange<UInt32> = supported) throws(ProtocolError) -> UInt32 {
        guard offered.contains(hello.version) else {
            throw ProtocolError(.unsupportedProtocolVersion,
                                "the server chose protocol version \(hello.version), the client offered \(offered.lowerBound)...\(offered.upperBound)")
        }
        return hello.version
    }
}
