import AtollCore
import Testing

/// The client connection's machine, driven through scripted scenarios.
@Suite struct ProtocolClientConnectionTests {
    typealias Action = ClientConnection.Action
    static let settings = ClientConnection.Settings(connectTimeoutMilliseconds: 5_000, pingIntervalMilliseconds: 60_000,
                                                    pongTimeoutMilliseconds: 10_000, lingerMilliseconds: 30_000,
                                                    fastReconnectLimitMilliseconds: 60_000)

    func closedAtOnce(_ actions: [Action]) -> Bool? {
        actions.lazy.compactMap { if case .notifyClosed(let atOnce) = $0 { atOnce } else { nil } }.first
    }

    @Test func anAttemptOpensSendsHelloFirstAndPingsAtOnce() {
        var c = ClientConnection(settings: Self.settings)
        #expect(c.open(now: 0) == [.scheduleTimer(.openTimeout, attempt: 1, afterMilliseconds: 5_000), .connect(attempt: 1)])
        #expect(c.status == .opening)
        // A second request while opening adds nothing.
        #expect(c.open(now: 1) == [])
        let opened = c.opened(attempt: 1, now: 100)
        #expect(Array(opened.prefix(3)) == [.cancelTimer(.openTimeout), .sendHello, .notifyOpened])
        #expect(opened.contains(.sendPing(Ping(timestamp: 100, lastRoundTripMilliseconds: 0))))
        #expect(opened.last == .scheduleTimer(.keepAlive, attempt: 1, afterMilliseconds: 10_000))
        #expect(c.status == .open)
        // A request while open is answered at once.
        #expect(c.open(now: 200) == [.notifyOpened])
    }

    @Test func aStaleAttemptIsIgnoredAndItsSocketNotTaken() {
        var c = ClientConnection(settings: Self.settings)
        _ = c.open(now: 0)
        // The open timeout ends attempt 1 …
        let timedOut = c.timerFired(.openTimeout, attempt: 1, now: 5_000)
        #expect(timedOut.first == .timedOut(.connect(5_000)))
        #expect(closedAtOnce(timedOut) == false)  // a failed attempt waits out the backoff
        _ = c.open(now: 6_000)
        #expect(c.attempt == 2)
        // … so its late upgrade and end change nothing.
        #expect(!c.isOpening(1))
        #expect(c.opened(attempt: 1, now: 6_001) == [])
        #expect(c.ended(attempt: 1, now: 6_002) == [])
        #expect(c.timerFired(.openTimeout, attempt: 1, now: 6_003) == [])
        #expect(c.status == .opening)
    }

    @Test func aMissingPongDropsTheConnectionAndALateOneIsIgnored() {
        var c = ClientConnection(settings: Self.settings)
        _ = c.open(now: 0)
        _ = c.opened(attempt: 1, now: 0)
        // The pong comes: the next ping waits the interval.
        c.receivedPong(Pong(timestamp: 0), now: 40)
        #expect(c.roundTripMilliseconds == 40)
        #expect(c.timerFired(.keepAlive, attempt: 1, now: 10_000) == [.scheduleTimer(.keepAlive, attempt: 1, afterMilliseconds: 50_040)])
        let ping = c.timerFired(.keepAlive, attempt: 1, now: 60_040)
        #expect(ping.first == .sendPing(Ping(timestamp: 60_040, lastRoundTripMilliseconds: 40)))
        // No pong for this one: dropped when its timeout passes, reconnecting at once (a drop).
        c.receivedPong(Pong(timestamp: 1), now: 60_100)  // for another ping: ignored
        #expect(c.timerFired(.keepAlive, attempt: 1, now: 65_000) == [.scheduleTimer(.keepAlive, attempt: 1, afterMilliseconds: 5_040)])
        let dropped = c.timerFired(.keepAlive, attempt: 1, now: 70_040)
        #expect(dropped.first == .timedOut(.pong(10_000)))
        #expect(closedAtOnce(dropped) == true)
        #expect(c.status == .closed)
    }

    @Test func dropsReconnectAtOnceAtMostOncePerLimitAndFailedAttemptsNever() {
        var c = ClientConnection(settings: Self.settings)
        func drop(at now: Int64) -> Bool? {
            _ = c.open(now: now)
            _ = c.opened(attempt: c.attempt, now: now)
            return closedAtOnce(c.ended(attempt: c.attempt, now: now))
        }
        #expect(drop(at: 0) == true)
        #expect(drop(at: 30_000) == false)
        _ = c.open(now: 61_000)
        #expect(closedAtOnce(c.ended(attempt: c.attempt, now: 61_000)) == false)  // never opened: a failed attempt
        #expect(drop(at: 61_000) == true)
        // Dropped by the shell (a moved base URL): the same as an end.
        _ = c.open(now: 200_000)
        _ = c.opened(attempt: c.attempt, now: 200_000)
        #expect(closedAtOnce(c.drop(now: 200_001)) == true)
        #expect(c.drop(now: 200_002) == [])
    }

    @Test func theConnectionLingersOnceNoSessionUsesItThenCloses() {
        var c = ClientConnection(settings: Self.settings)
        #expect(c.sessionsChanged(to: 1) == [])
        _ = c.open(now: 0)
        _ = c.opened(attempt: 1, now: 0)
        #expect(c.sessionsChanged(to: 0) == [.scheduleTimer(.linger, attempt: 1, afterMilliseconds: 30_000)])
        // A session within the linger time keeps it.
        #expect(c.sessionsChanged(to: 1) == [.cancelTimer(.linger)])
        #expect(c.timerFired(.linger, attempt: 1, now: 30_000) == [])
        _ = c.sessionsChanged(to: 0)
        #expect(c.timerFired(.linger, attempt: 1, now: 60_000) == [.close])
        #expect(c.timerFired(.linger, attempt: 1, now: 60_001) == [])
        // Closed already: nothing lingers.
        _ = c.ended(attempt: 1, now: 60_002)
        #expect(c.sessionsChanged(to: 0) == [])
        #expect(c.closeRequested() == [])
    }
}
