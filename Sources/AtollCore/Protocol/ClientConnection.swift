/// The app's one sync connection, shared by its sessions, as a pure state machine: whether it
/// is closed, opening or open, which attempt is the current one (what an older attempt reports
/// is ignored), the keep-alive, the fast reconnect after a drop, and the linger once no session
/// uses it. Every input returns the actions the shell (the SDK's `SyncConnection`: the
/// WebSocket, its writer, the timers' tasks) carries out, in order. No I/O; times are
/// milliseconds the shell passes in.
///
/// ```swift
/// var connection = ClientConnection(settings: .init())
/// perform(connection.open(now: now))              // [.scheduleTimer(.openTimeout, …), .connect(attempt: 1)]
/// perform(connection.opened(attempt: 1, now: now)) // [.cancelTimer(.openTimeout), .sendHello, .notifyOpened, .sendPing(…), …]
/// perform(connection.ended(attempt: 1, now: now))  // [.abandon, …, .notifyClosed(reconnectAtOnce: true)]
/// ```
package struct ClientConnection: Sendable {
    package enum Status: Hashable, Sendable { case closed, opening, open }

    package struct Settings: Hashable, Sendable {
        /// Connecting and the WebSocket upgrade together: an attempt still opening after it fails.
        package var connectTimeoutMilliseconds: Int64
        package var pingIntervalMilliseconds: Int64
        package var pongTimeoutMilliseconds: Int64
        /// How long the connection stays open once no session uses it.
        package var lingerMilliseconds: Int64
        /// A drop of the open connection reconnects at once, at most once in this time.
        package var fastReconnectLimitMilliseconds: Int64

        package init(connectTimeoutMilliseconds: Int64 = 120_000, pingIntervalMilliseconds: Int64 = 60_000,
                    pongTimeoutMilliseconds: Int64 = 120_000, lingerMilliseconds: Int64 = 30_000,
                    fastReconnectLimitMilliseconds: Int64 = 60_000) {
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
            self.pingIntervalMilliseconds = pingIntervalMilliseconds
            self.pongTimeoutMilliseconds = pongTimeoutMilliseconds
            self.lingerMilliseconds = lingerMilliseconds
            self.fastReconnectLimitMilliseconds = fastReconnectLimitMilliseconds
        }
    }

    package enum Timer: Hashable, Sendable {
        /// The attempt must be open by then.
        case openTimeout
        /// Time to ping, or to give up on the pong.
        case keepAlive
        /// No session came back within the linger time.
        case linger
    }

    /// Why the machine itself ended an attempt.
    package enum Timeout: Hashable, Sendable {
        /// No WebSocket upgrade answer within the connect timeout (milliseconds).
        case connect(Int64)
        /// No pong within the pong timeout (milliseconds).
        case pong(Int64)
    }

    package enum Action: Hashable, Sendable {
        /// Start attempt `attempt`; report ``ClientConnection/opened(attempt:now:)`` when its
        /// WebSocket is up and ``ClientConnection/ended(attempt:now:)`` when it ends.
        case connect(attempt: UInt64)
        /// The new WebSocket is the connection: message ids start again, the hello goes first.
        case sendHello
        case sendPing(Ping)
        /// Call ``ClientConnection/timerFired(_:attempt:now:)`` after the delay; a newer schedule
        /// of the same timer replaces it.
        case scheduleTimer(Timer, attempt: UInt64, afterMilliseconds: Int64)
        case cancelTimer(Timer)
        /// The machine ended the attempt (below): the failure the sessions hear.
        case timedOut(Timeout)
        /// Give up the current attempt's task and socket (it ended, or was ended).
        case abandon
        /// Close the open WebSocket cleanly; its end is reported as usual.
        case close
        /// Tell every session the connection is open.
        case notifyOpened
        /// Tell every session the connection closed; `reconnectAtOnce` for a drop of an open
        /// connection that may reconnect without the backoff delay.
        case notifyClosed(reconnectAtOnce: Bool)
    }

    package internal(set) var status: Status = .closed
    /// When ``status`` last changed (milliseconds), for diagnostics.
    package internal(set) var statusSince: Int64 = 0
    /// Counts attempts to open.
    package internal(set) var attempt: UInt64 = 0
    package var settings: Settings
    /// Whether the current attempt got open: its end is a drop, not a failed attempt.
    var attemptOpened = false
    var keepAlive = ConnectionKeepAlive()
    /// When a drop last reconnected at once.
    var lastFastReconnect: Int64?
    /// How many sessions use the connection.
    package internal(set) var sessions = 0
    var lingering = false

    package init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// The measured round trip of the last ping (0: none yet).
    package var roundTripMilliseconds: Int64 { keepAlive.roundTripMilliseconds }

    /// A session asks for the connection: opens it if closed; an open one is announced again.
    package mutating func open(now: Int64) -> [Action] {
        switch status {
        case .open:
            return [.notifyOpened]
        case .opening:
            return []
        case .closed:
            attempt += 1
            attemptOpened = false
            set(.opening, now)
            // The timer first: an attempt that fails at once (a bad TLS setting) ends before the
            // next action would run.
            return [.scheduleTimer(.openTimeout, attempt: attempt, afterMilliseconds: settings.connectTimeoutMilliseconds),
                    .connect(attempt: attempt)]
        }
    }

    /// Attempt `attempt`'s WebSocket is up. Returns no action for a stale attempt (one the
    /// machine ended meanwhile): the shell must close that socket (``isCurrent(_:)`` tells).
    package mutating func opened(attempt: UInt64, now: Int64) -> [Action] {
        guard isOpening(attempt) else { return [] }
        attemptOpened = true
        set(.open, now)
        keepAlive = ConnectionKeepAlive(intervalMilliseconds: settings.pingIntervalMilliseconds,
                                        timeoutMilliseconds: settings.pongTimeoutMilliseconds)
        // The first ping goes at once: it measures the round trip.
        return [.cancelTimer(.openTimeout), .sendHello, .notifyOpened] + keepAliveTick(now: now)
    }

    /// Whether `attempt` is the current one and still opening.
    package func isOpening(_ attempt: UInt64) -> Bool { attempt == self.attempt && status == .opening }

    /// Attempt `attempt` ended (closed, failed, or dropped by the shell); nothing happens if a
    /// newer attempt started since.
    package mutating func ended(attempt: UInt64, now: Int64) -> [Action] {
        guard attempt == self.attempt, status != .closed else { return [] }
        let wasOpen = status == .open && attemptOpened
        set(.closed, now)
        lingering = false
        // A drop of an open connection reconnects at once, once per fast reconnect limit; failed
        // attempts and further drops within the limit wait out the backoff.
        var atOnce = false
        if wasOpen, lastFastReconnect.map({ now - $0 >= settings.fastReconnectLimitMilliseconds }) ?? true {
            lastFastReconnect = now
            atOnce = true
        }
        return [.abandon, .cancelTimer(.openTimeout), .cancelTimer(.keepAlive), .cancelTimer(.linger),
                .notifyClosed(reconnectAtOnce: atOnce)]
    }

    /// The current attempt is given up as lost (the base URL moved, a message could not be made
    /// durable before sending): the same as its end.
    package mutating func drop(now: Int64) -> [Action] {
        ended(attempt: attempt, now: now)
    }

    /// Close the connection cleanly if it is not closed (new request headers, say); its end is
    /// reported by the shell as usual.
    package mutating func closeRequested() -> [Action] {
        status == .closed ? [] : [.close]
    }

    /// A timer the machine scheduled fired; one of an older attempt is ignored.
    package mutating func timerFired(_ timer: Timer, attempt: UInt64, now: Int64) -> [Action] {
        guard attempt == self.attempt else { return [] }
        switch timer {
        case .openTimeout:
            guard status == .opening else { return [] }
            return [.timedOut(.connect(settings.connectTimeoutMilliseconds))] + ended(attempt: attempt, now: now)
        case .keepAlive:
            guard status == .open else { return [] }
            return keepAliveTick(now: now)
        case .linger:
            guard lingering, sessions == 0, status != .closed else { return [] }
            lingering = false
            return [.close]
        }
    }

    /// A pong arrived (one for another ping than the outstanding one is ignored).
    package mutating func receivedPong(_ pong: Pong, now: Int64) {
        keepAlive.receivedPong(pong, now: now)
    }

    /// The number of sessions using the connection changed: with none left, an open connection
    /// lingers, then closes; a session within the linger time keeps it.
    package mutating func sessionsChanged(to count: Int) -> [Action] {
        sessions = count
        if count == 0, status != .closed {
            lingering = true
            return [.scheduleTimer(.linger, attempt: attempt, afterMilliseconds: settings.lingerMilliseconds)]
        }
        if count > 0, lingering {
            lingering = false
            return [.cancelTimer(.linger)]
        }
        return []
    }

    private mutating func keepAliveTick(now: Int64) -> [Action] {
        var actions: [Action] = []
        switch keepAlive.tick(now: now) {
        case .idle: break
        case .sendPing(let ping): actions.append(.sendPing(ping))
        case .timedOut: return [.timedOut(.pong(settings.pongTimeoutMilliseconds))] + ended(attempt: attempt, now: now)
        }
        let next = keepAlive.nextDeadline ?? now + settings.pingIntervalMilliseconds
        return actions + [.scheduleTimer(.keepAlive, attempt: attempt, afterMilliseconds: max(0, next - now))]
    }

    private mutating func set(_ status: Status, _ now: Int64) {
        self.status = status
        statusSince = now
    }
}
