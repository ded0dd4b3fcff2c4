/// When each write of one connection is due: a fixed, open-loop timetable that does not wait for the
/// server. Latency is measured from a write's time here, not from when it was sent, so a server (or
/// a generator) that falls behind shows its queueing in the figures instead of slowing the load.
///
/// The connection's `sessions` write in turn, evenly spaced: write `q` belongs to session
/// `q % sessions` (its `q / sessions`-th write) and is due at `start + q × interval`. Connections of
/// one run start a fraction of an interval apart (``offset(connection:of:)``), so the whole run
/// writes at an even pace.
///
/// ```swift
/// let schedule = OpenLoopSchedule(start: now, ratePerSession: 1, sessions: 50)
/// for q in sent..<schedule.due(at: now) { let write = schedule.write(q); … }
/// ```
package struct OpenLoopSchedule: Hashable, Sendable {
    /// When write 0 is due (nanoseconds of the generator's monotonic clock).
    package var start: UInt64
    /// Writes per second of each session.
    package var ratePerSession: Double
    /// Sessions sharing this timetable (one connection's).
    package var sessions: Int

    /// - Precondition: `ratePerSession > 0`, `sessions > 0`.
    package init(start: UInt64, ratePerSession: Double, sessions: Int) {
        precondition(ratePerSession > 0 && ratePerSession.isFinite, "a schedule needs a positive rate")
        precondition(sessions > 0, "a schedule needs a session")
        self.start = start
        self.ratePerSession = ratePerSession
        self.sessions = sessions
    }

    /// Nanoseconds between two consecutive writes of the timetable.
    package var interval: Double { 1e9 / (ratePerSession * Double(sessions)) }

    /// Write `q`: the session writing it, which of that session's writes it is, and when it is due.
    package func write(_ q: Int) -> (session: Int, ordinal: Int, due: UInt64) {
        (q % sessions, q / sessions, time(of: q))
    }

    /// When write `q` is due.
    package func time(of q: Int) -> UInt64 { start &+ UInt64((Double(q) * interval).rounded(.down)) }

    /// How many writes are due at `now` (write 0 is due at ``start``).
    ///
    /// - Complexity: O(1).
    package func due(at now: UInt64) -> Int {
        guard now >= start else { return 0 }
        var count = Int((Double(now - start) / interval).rounded(.down)) + 1
        // Floating point may put a boundary one off; the timetable's own times decide.
        while count > 0, time(of: count - 1) > now { count -= 1 }
        while time(of: count) <= now { count += 1 }
        return count
    }

    /// The writes due in `[from, to)`: what a phase of that span sends.
    package func writes(from: UInt64, to: UInt64) -> Range<Int> {
        let lower = from <= start ? 0 : due(at: from - 1)
        let upper = to <= start ? 0 : due(at: to - 1)
        return lower..<max(lower, upper)
    }

    /// How far connection `index` of `count` starts after the run's start: an even share of one
    /// interval, so the connections' writes interleave.
    package static func offset(connection index: Int, of count: Int, ratePerSession: Double, sessionsPerConnection: Int) -> UInt64 {
        guard count > 1 else { return 0 }
        let interval = 1e9 / (ratePerSession * Double(max(1, sessionsPerConnection)))
        return UInt64((interval * Double(index) / Double(count)).rounded(.down))
    }
}
