import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address (an IPv4-mapped IPv6 address is its IPv4 address).
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes, or 16 for IPv6.
    let bytes: [UInt8]

    /// Reads `192.0.2.1` or `2001:db8::1` (no brackets, no port, no zone); nil for anything else.
    init?(_ text: some StringProtocol) {
        // The longest IPv6 text (with an IPv4 tail) is 45 characters.
        guard !text.isEmpty, text.utf8.count <= 45, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let string = String(text)
        var v4 = in_addr()
        if string.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard string.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        bytes = Array(all.prefix(12)) == mapped ? Array(all.suffix(4)) : all
    }

    var isIPv4: Bool { bytes.count == 4 }

    var description: String {
        isIPv4 ? bytes.map(String.init).joined(separator: ".") : Self.groups(bytes).joined(separator: ":")
    }

    /// What per-address limits count by: an IPv4 address itself, an IPv6 address's /64 (one
    /// subscriber usually holds a whole /64, so counting addresses would count nothing).
    var limitKey: String {
        isIPv4 ? description : Self.groups(Array(bytes.prefix(8))).joined(separator: ":") + "::/64"
    }

    /// 16-bit groups in lowercase hex without leading zeros.
    private static func groups(_ bytes: [UInt8]) -> [String] {
        stride(from: 0, to: bytes.count, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
    }
}

/// A network in CIDR notation: `10.0.0.0/8`, `2001:db8::/32`, or one address (`192.0.2.7`).
struct IPNetwork: Sendable, Hashable {
    let address: IPAddress
    let prefixLength: Int

    /// Nil for anything but an address with an optional `/length` that fits it.
    init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let bits = address.bytes.count * 8
        if parts.count == 2 {
            // An IPv4-mapped network ("::ffff:10.0.0.0/104") counts its bits from the IPv4 address.
            guard parts[1].count <= 3, parts[1].allSatisfy(\.isASCII), var length = Int(parts[1]) else { return nil }
            if address.isIPv4, parts[0].contains(":") { length -= 96 }
            guard (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.address = address
    }

    func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address.bytes, candidate.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard a & mask == b & mask else { return false }
            remaining -= 8
        }
        return true
    }
}

/// Which address per-address limits count a request by: the peer's, or, when the peer is a
/// trusted proxy (``ServerConfiguration/trustedProxies``), the rightmost address in the
/// forwarding header that is not a trusted proxy's. Only hops the server trusts are believed:
/// whatever a client writes into the header itself stands left of what its proxies appended.
///
/// Pure: headers in, a key out. Hostile headers cost a bounded amount of work (only the last
/// ``maxHeaderBytes`` and ``maxHops`` hops are read), and an entry that is not an address ends
/// the walk at the nearest trusted hop (its clients share that hop's key: never a key the client chose).
///
/// ```swift
/// let resolver = ClientAddressResolver(trustedProxies: ["10.0.0.0/8"])
/// resolver.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9, 10.0.0.7"]) // "203.0.113.9"
/// ```
struct ClientAddressResolver: Sendable, Hashable {
    /// The header trusted proxies append the client's address to.
    enum Header: String, Sendable, Hashable, Codable {
        /// `X-Forwarded-For: client, proxy1, proxy2` (nginx, HAProxy, most load balancers).
        case xForwardedFor = "X-Forwarded-For"
        /// RFC 7239 `Forwarded: for=client;proto=https, for="[2001:db8::1]:443"`.
        case forwarded = "Forwarded"
    }

    static let maxHeaderBytes = 8_192
    static let maxHops = 32

    let trustedProxies: [IPNetwork]
    let header: Header

    /// - Parameter trustedProxies: CIDRs; entries that do not read are left out (the configuration
    ///   checks them, ``ServerConfiguration/validate()``).
    init(trustedProxies: [String] = [], header: Header = .xForwardedFor) {
        self.trustedProxies = trustedProxies.compactMap(IPNetwork.init)
        self.header = header
    }

    func isTrusted(_ address: IPAddress) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// The limit key of a request from `peer` (the socket's address, nil when unknown) carrying
    /// `forwardedFor`, the values of the ``header`` lines in order.
    func key(peer: String?, forwardedFor: [String]) -> String {
        guard let peerText = peer, let peerAddress = IPAddress(peerText) else { return peer ?? "unknown" }
        guard isTrusted(peerAddress), !forwardedFor.isEmpty else { return peerAddress.limitKey }
        var nearestTrusted = peerAddress
        for hop in Self.hops(forwardedFor.joined(separator: ","), header: header) {
            guard let address = hop else { break }
            guard isTrusted(address) else { return address.limitKey }
            nearestTrusted = address
        }
        return nearestTrusted.limitKey
    }

    /// The hops of a header, nearest (rightmost) first, at most ``maxHops``: each an address, or
    /// nil for an entry that is none (`unknown`, an obfuscated name, garbage).
    static func hops(_ value: String, header: Header) -> [IPAddress?] {
        var tail = Substring(value.utf8.count > maxHeaderBytes ? String(decoding: value.utf8.suffix(maxHeaderBytes), as: UTF8.self) : value)
        if value.utf8.count > maxHeaderBytes, let comma = tail.firstIndex(of: ",") {
            // The first entry was cut: it is not read.
            tail = tail[tail.index(after: comma)...]
        }
        return tail.split(separator: ",", omittingEmptySubsequences: false).reversed().prefix(maxHops).map { entry in
            switch header {
            case .xForwardedFor: address(entry)
            case .forwarded: forwardedFor(entry)
            }
        }
    }

    /// The `for=` of one `Forwarded` element (`for=192.0.2.1;proto=https`).
    static func forwardedFor(_ element: Substring) -> IPAddress? {
        for pair in element.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
            var value = Substring(parts[1].trimmingCharacters(in: .whitespaces))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            return address(value)
        }
        return nil
    }

    /// An address with optional brackets and port (`192.0.2.1`, `192.0.2.1:443`, `[2001:db8::1]:443`, `2001:db8::1`).
    static func address(_ entry: Substring) -> IPAddress? {
        let text = entry.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber) && rest.count <= 6) else { return nil }
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        if let address = IPAddress(text) { return address }
        // IPv4 with a port.
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].allSatisfy(\.isNumber), (1...5).contains(parts[1].count),
              let address = IPAddress(parts[0]), address.isIPv4 else { return nil }
        return address
    }
}
