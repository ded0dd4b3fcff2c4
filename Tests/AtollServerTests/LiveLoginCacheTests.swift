import Foundation
@testable import AtollServer
import Testing

/// The cache of live logins the server reads access tokens' devices through: bounded in size and
/// in how long it trusts an answer.
@Suite struct LiveLoginCacheTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func anAnswerIsTrustedForItsLifetimeOnly() {
        let cache = LiveLoginCache(capacity: 10, lifetime: 5)
        cache.record(deviceID: "d1", userID: "u1", live: true, now: start, readSince: cache.generation)
        #expect(cache.isLive(deviceID: "d1", now: start.addingTimeInterval(4.9)) == true)
        #expect(cache.isLive(deviceID: "d1", now: start.addingTimeInterval(5)) == nil)
        cache.record(deviceID: "d2", userID: "u1", live: false, now: start, readSince: cache.generation)
        #expect(cache.isLive(deviceID: "d2", now: start.addingTimeInterval(1)) == false)
        #expect(cache.isLive(deviceID: "d2", now: start.addingTimeInterval(-1)) == nil, "a clock that went back trusts nothing")
        #expect(cache.isLive(deviceID: "unknown", now: start) == nil)
    }

    @Test func revocationsForgetAtOnce() {
        let cache = LiveLoginCache(capacity: 10, lifetime: 5)
        for (device, user) in [("d1", "u1"), ("d2", "u1"), ("d3", "u2")] { cache.record(deviceID: device, userID: user, live: true, now: start, readSince: cache.generation) }
        cache.forget(userID: "u1", deviceID: "d1")
        #expect(cache.isLive(deviceID: "d1", now: start) == nil)
        #expect(cache.isLive(deviceID: "d2", now: start) == true)
        cache.forget(userID: "u1", deviceID: nil)
        #expect(cache.isLive(deviceID: "d2", now: start) == nil)
        #expect(cache.isLive(deviceID: "d3", now: start) == true)
    }

    @Test func theCacheStaysWithinItsCapacity() {
        let cache = LiveLoginCache(capacity: 100, lifetime: 5)
        for n in 0..<10_000 { cache.record(deviceID: "d\(n)", userID: "u", live: true, now: start.addingTimeInterval(Double(n) / 1_000), readSince: cache.generation) }
        #expect(cache.count <= 100)
        #expect(cache.isLive(deviceID: "d9999", now: start.addingTimeInterval(10)) == true, "the newest answer is kept")
    }

    /// A store read that a revocation overtook (the read began before the forgetting, its answer
    /// arrives after) is not recorded: the next check reads the store again.
    @Test func anAnswerReadBeforeARevocationIsNotRecorded() {
        let cache = LiveLoginCache()
        let before = cache.generation
        cache.forget(userID: "u1", deviceID: "d1")  // the logout commits while the read is in flight
        cache.record(deviceID: "d1", userID: "u1", live: true, now: start, readSince: before)
        #expect(cache.isLive(deviceID: "d1", now: start) == nil)
        cache.record(deviceID: "d1", userID: "u1", live: false, now: start, readSince: cache.generation)
        #expect(cache.isLive(deviceID: "d1", now: start) == false)
    }
}
