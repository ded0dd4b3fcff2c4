import Foundation
@testable import AtollServer
import Testing

/// Which address per-address limits count a request under (issue 21 §1): proxies are believed
/// only when trusted, IPv6 is counted by /64, and hostile headers cost bounded work.
@Suite struct ClientAddressTests {
    let proxies = ClientAddressResolver(trustedProxies: ["10.0.0.0/8", "2001:db8:ffff::/48"])

    @Test func networksReadCIDRsAndRefuseEverythingElse() throws {
        func address(_ text: String) throws -> IPAddress { try #require(IPAddress(text)) }
        func network(_ text: String) throws -> IPNetwork { try #require(IPNetwork(text)) }
        let tens = try network("10.0.0.0/8")
        #expect(tens.contains(try address("10.255.1.1")))
        #expect(!tens.contains(try address("11.0.0.1")))
        #expect(!tens.contains(try address("2001:db8::1")), "another family")
        let one = try network("192.0.2.7")
        let (seven, eight) = (try address("192.0.2.7"), try address("192.0.2.8"))
        #expect(one.contains(seven))
        #expect(!one.contains(eight))
        let v6 = try network("2001:db8::/32")
        let (inside, outside) = (try address("2001:db8:1234::1"), try address("2001:db9::1"))
        #expect(v6.contains(inside))
        #expect(!v6.contains(outside))
        let odd = try network("192.168.0.0/23")
        let (last, next) = (try address("192.168.1.255"), try address("192.168.2.0"))
        #expect(odd.contains(last))
        #expect(!odd.contains(next))
        let mapped = try network("::ffff:10.0.0.0/104")
        #expect(mapped.contains(try address("10.1.2.3")))
        #expect(try network("0.0.0.0/0").contains(try address("8.8.8.8")))
        for bad in ["", "garbage", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8/8", "2001:db8::/129", "10.0.0/8",
                    "999.0.0.0/8", "10.0.0.0/08x", "10.0.0.0/٨", String(repeating: "1", count: 10_000), "fe80::1%eth0/64"] {
            #expect(IPNetwork(bad) == nil, "\(bad.prefix(40))")
        }
    }

    @Test func withoutTrustedProxiesHeadersAreNeverRead() {
        let none = ClientAddressResolver()
        #expect(none.key(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"]) == "203.0.113.9")
        #expect(proxies.key(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"]) == "203.0.113.9", "an untrusted peer's header")
        #expect(proxies.key(peer: nil, forwardedFor: ["198.51.100.1"]) == "unknown")
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9, 10.0.0.7"]) == "203.0.113.9")
        // What the client wrote itself stands left of what the proxies appended.
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["198.51.100.66, 203.0.113.9"]) == "203.0.113.9")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["198.51.100.66", "203.0.113.9, 10.1.1.1"]) == "203.0.113.9",
                "several header lines are one list")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["10.0.0.9, 10.0.0.7"]) == "10.0.0.9", "every hop trusted")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: []) == "10.0.0.5")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9:4711"]) == "203.0.113.9")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["[2001:db8:1:2::5]:443"]) == "2001:db8:1:2::/64")
    }

    @Test func ipv6IsCountedBySlash64() {
        let a = proxies.key(peer: "2001:db8:1:2:aaaa::1", forwardedFor: [])
        #expect(a == "2001:db8:1:2::/64")
        #expect(proxies.key(peer: "2001:DB8:1:2:ffff:ffff:ffff:ffff", forwardedFor: []) == a)
        #expect(proxies.key(peer: "2001:db8:1:3::1", forwardedFor: []) != a)
        #expect(proxies.key(peer: "::ffff:203.0.113.9", forwardedFor: []) == "203.0.113.9", "IPv4-mapped is IPv4")
        #expect(proxies.key(peer: "2001:db8:ffff::1", forwardedFor: ["2001:db8:5:6::1, 2001:db8:ffff:1::2"]) == "2001:db8:5:6::/64")
    }

    @Test func forwardedHeadersAreReadWhenConfigured() {
        let rfc = ClientAddressResolver(trustedProxies: ["10.0.0.0/8"], header: .forwarded)
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: ["for=192.0.2.60;proto=http;by=203.0.113.43"]) == "192.0.2.60")
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: [#"for="[2001:db8:cafe::17]:4711""#]) == "2001:db8:cafe:0::/64")
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: ["for=198.51.100.1, For=203.0.113.9;proto=https"]) == "203.0.113.9")
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: ["for=unknown"]) == "10.0.0.5", "no address: the nearest trusted hop")
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: ["for=_hidden, for=10.0.0.8"]) == "10.0.0.8")
        #expect(rfc.key(peer: "10.0.0.5", forwardedFor: ["proto=https"]) == "10.0.0.5")
    }

    @Test func hostileHeadersCostBoundedWorkAndNeverPickTheClientsChoice() {
        let garbage = ["\u{0}", "999.1.1.1", "[::1", "[::1]:99999999", "1.2.3.4:", "1.2.3.4:5:6", "fe80::1%eth0", "🙂",
                       String(repeating: "a", count: 100_000), "1.2.3.4\r\nX-Evil: 1", "::ffff:zz"]
        for entry in garbage {
            // Garbage as the nearest hop: counted under the proxy, never under the garbage.
            #expect(proxies.key(peer: "10.0.0.5", forwardedFor: [entry]) == "10.0.0.5", "\(entry.prefix(20))")
            #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9, \(entry), 10.0.0.6"]) == "10.0.0.6")
        }
        // An overlong header: only its tail is read, the client's own address at the right end.
        let long = Array(repeating: "198.51.100.1", count: 200_000).joined(separator: ",") + ", 203.0.113.9"
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: [long]) == "203.0.113.9")
        #expect(ClientAddressResolver.hops(long, header: .xForwardedFor).count == ClientAddressResolver.maxHops)
        // A chain of trusted hops longer than the bound stops at the bound.
        let trustedChain = Array(repeating: "10.0.0.1", count: 1_000).joined(separator: ",")
        #expect(proxies.key(peer: "10.0.0.5", forwardedFor: ["203.0.113.9," + trustedChain]) == "10.0.0.1")
        #expect(proxies.key(peer: "not an address", forwardedFor: ["203.0.113.9"]) == "not an address")
    }
}

/// The limiter of confirmation and reset mails (issue 21 §1): flooding other keys must not lift
/// the throttle of the key under attack.
@Suite struct RateLimiterTests {
    @Test func aFloodOfOtherKeysDoesNotLiftAThrottle() {
        let limiter = RateLimiter(limit: 3, window: 3_600, maxKeys: 100)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for second in 0..<3 { limiter.record("victim@example.com", now: start.addingTimeInterval(Double(second))) }
        #expect(limiter.retryAfter("victim@example.com", now: start.addingTimeInterval(3)) != nil)
        for n in 0..<10_000 {
            let time = start.addingTimeInterval(10 + Double(n) / 100)
            limiter.record("flood-\(n)@example.com", now: time)
        }
        #expect(limiter.keyCount <= 100, "memory stays bounded")
        #expect(limiter.retryAfter("victim@example.com", now: start.addingTimeInterval(200)) != nil, "still throttled")
        // The throttle still ends with its window.
        #expect(limiter.retryAfter("victim@example.com", now: start.addingTimeInterval(3_601)) == nil)
    }

    @Test func whenEveryKeyIsThrottledTheSoonestToEndGoFirst() {
        let limiter = RateLimiter(limit: 1, window: 3_600, maxKeys: 10)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for n in 0..<50 { limiter.record("k\(n)", now: start.addingTimeInterval(Double(n))) }
        #expect(limiter.keyCount <= 10)
        #expect(limiter.retryAfter("k49", now: start.addingTimeInterval(50)) != nil, "the newest throttle is kept")
    }
}

/// `trustedProxies` on a running server: behind a trusted proxy each client has its own
/// per-address limit; a client that is no trusted proxy cannot pick its address by a header.
@Suite struct TrustedProxyTests {
    static func failedLogin(_ server: TestServer, forwardedFor: String?) async throws -> Int {
        try await server.http.send(
            "POST", HTTP.loginPath(app: "tasks", provider: "local-userpass"),
            body: HTTP.encode(["username": "nobody-\(UUID().uuidString)@example.com", "password": "wrong-password"]),
            headers: forwardedFor.map { ["X-Forwarded-For": $0] } ?? [:]).status
    }

    @Test func behindATrustedProxyEachClientHasItsOwnLimit() async throws {
        let configuration = TestServer.configuration {
            $0.limits.failedLoginsPerAddress = 3
            $0.trustedProxies = ["127.0.0.0/8", "::1"]
        }
        try await withServer(configuration) { server in
            func status(_ forwardedFor: String) async throws -> Int { try await Self.failedLogin(server, forwardedFor: forwardedFor) }
            for _ in 0..<3 {
                let first = try await status("203.0.113.1")
                #expect(first == 401)
            }
            let throttled = try await status("203.0.113.1")
            #expect(throttled == 429)
            // What the client wrote left of its proxy's entry is not believed.
            let spoofed = try await status("198.51.100.7, 203.0.113.1")
            #expect(spoofed == 429)
            let other = try await status("203.0.113.2")
            #expect(other == 401, "another client behind the proxy")
            // IPv6 clients are counted by /64.
            for host in 1...3 {
                let v6 = try await status("2001:db8:7:7::\(host)")
                #expect(v6 == 401)
            }
            let sameSlash64 = try await status("2001:db8:7:7:ffff::9")
            #expect(sameSlash64 == 429)
            let otherSlash64 = try await status("2001:db8:7:8::1")
            #expect(otherSlash64 == 401)
        }
    }

    @Test func withoutTrustedProxiesAHeaderChangesNothing() async throws {
        let configuration = TestServer.configuration { $0.limits.failedLoginsPerAddress = 3 }
        try await withServer(configuration) { server in
            for n in 0..<3 {
                let status = try await Self.failedLogin(server, forwardedFor: "203.0.113.\(n)")
                #expect(status == 401)
            }
            let other = try await Self.failedLogin(server, forwardedFor: "203.0.113.99")
            #expect(other == 429, "one peer, one limit")
            let none = try await Self.failedLogin(server, forwardedFor: nil)
            #expect(none == 429)
        }
    }

    @Test func theConfigurationRefusesWhatIsNoNetwork() throws {
        for bad in ["10.0.0.0/33", "localhost", "", "10.0.0.0/8/8"] {
            var configuration = ServerConfiguration()
            configuration.trustedProxies = ["10.0.0.0/8", bad]
            #expect(throws: ConfigurationError.self, "\(bad)") { try configuration.validate() }
        }
        var header = ServerConfiguration()
        header.forwardedHeader = "X-Real-IP"
        #expect(throws: ConfigurationError.self) { try header.validate() }
        var good = ServerConfiguration()
        good.trustedProxies = ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]
        good.forwardedHeader = "Forwarded"
        try good.validate()
        let decoded = try JSONDecoder().decode(
            ServerConfiguration.self, from: Data(#"{"trustedProxies": ["10.0.0.0/8"], "forwardedHeader": "Forwarded"}"#.utf8))
        #expect(decoded.trustedProxies == ["10.0.0.0/8"] && decoded.forwardedHeader == "Forwarded")
    }
}
