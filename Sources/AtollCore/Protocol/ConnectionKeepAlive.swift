/// Ping/pong bookkeeping for one client connection: when to ping, the measured round trip, and
/// when the server is considered gone. Pure: the shell passes the time in (milliseconds).
///
/// ```swift
/// var keepAlive = ConnectionKeepAlive()
/// switch keepAlive.tick(now: clock.now) {
/// case .sendPing(let ping): send(.ping(ping))
/// case .timedOut: closeConnection()      // reconnect with backoff
/// case .idle: break
/// }
/// ```
package struct ConnectionKeepAlive: Sendable, Hashable {
    package enum Decision: Hashable, Sendable {
        case idle
        case sendPing(Ping)
        /// No pong within the timeout: close the connection.
        case timedOut
    }

    /// Time between a pong and the next ping.
    package var intervalMilliseconds: Int64
    /// How long to wait for a pong.
    package var timeoutMilliseconds: Int64
    /// The last measured round trip (0: none yet).
    package private(set) var roundTripMilliseconds: Int64 = 0
    private var outstanding: Int64?
    private var nextPingAt: Int64?

    package init(intervalMilliseconds: Int64 = 60_000, timeoutMilliseconds: Int64 = 120_000) {
        self.intervalMilliseconds = intervalMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// What to do now; call it when the timer the shell keeps for ``nextDeadline`` fires.
    package mutating func tick(now: Int64) -> Decision {
        if let sent = outstanding {
            return now - sent >= timeoutMilliseconds ? .timedOut : .idle
        }
        guard now >= (nextPingAt ?? now) else { return .idle }
        outstanding = now
        return .sendPing(Ping(timestamp: now, lastRoundTripMilliseconds: roundTripMilliseconds))
    }

    /// When ``tick(now:)`` next has something to do.
    package var nextDeadline: Int64? {
        if let sent = outstanding { return sent + timeoutMilliseconds }
        return nextPingAt
    }

    /// A pong arrived; pongs for another ping than the outstanding one are ignored.
    package mutating func receivedPong(_ pong: Pong, now: Int64) {
        guard pong.timestamp == outstanding else { return }
        roundTripMilliseconds = max(0, now - pong.timestamp)
        outstanding = nil
        nextPingAt = now + intervalMilliseconds
    }
}
