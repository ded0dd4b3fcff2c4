import AtollCore

/// What one phase counts, shared by every connection of a run (one lock, held for a few
/// additions per message).
final class LoadRecorder: Sendable {
    struct Counts: Sendable {
        /// Due times counted: `[from, to)` of the generator's clock.
        var window: Range<UInt64> = 0..<0
        var writes = 0
        var skipped = 0
        var acknowledged = 0
        var downloads = 0
        /// Writes counted per realm group (to know how many downloads they owe).
        var writesPerGroup: [Int]
        var acknowledgement = LatencyHistogram()
        var download = LatencyHistogram()
        var failures: [String] = []
    }

    private let counts: Locked<Counts>
    let sessionsPerRealm: Int

    init(groups: Int, sessionsPerRealm: Int) {
        counts = Locked(Counts(writesPerGroup: Array(repeating: 0, count: groups)))
        self.sessionsPerRealm = sessionsPerRealm
    }

    /// Starts counting writes due in `window`, from zero.
    func reset(window: Range<UInt64>) {
        counts.withLock { counts in
            counts = Counts(window: window, writesPerGroup: Array(repeating: 0, count: counts.writesPerGroup.count))
        }
    }

    func snapshot() -> Counts { counts.withLock { $0 } }

    /// A session sent (or, failed, could not send) a write due at `due`.
    func wrote(session: Int, due: UInt64, sent: Bool) {
        counts.withLock { counts in
            guard counts.window.contains(due) else { return }
            if sent {
                counts.writes += 1
                counts.writesPerGroup[session / sessionsPerRealm] += 1
            } else {
                counts.skipped += 1
            }
        }
    }

    /// What a session's message did, at `now`.
    func record(_ outcome: LoadSession.Outcome, now: UInt64) {
        guard !outcome.acknowledged.isEmpty || !outcome.downloaded.isEmpty || outcome.failure != nil else { return }
        counts.withLock { counts in
            for due in outcome.acknowledged where counts.window.contains(due) {
                counts.acknowledged += 1
                counts.acknowledgement.record(microseconds: now > due ? (now - due) / 1000 : 0)
            }
            for write in outcome.downloaded where counts.window.contains(write.due) {
                counts.downloads += 1
                counts.download.record(microseconds: now > write.due ? (now - write.due) / 1000 : 0)
            }
            if let failure = outcome.failure, counts.failures.count < 8 { counts.failures.append(failure) }
        }
    }

    func failed(_ reason: String) {
        counts.withLock { counts in if counts.failures.count < 8 { counts.failures.append(reason) } }
    }
}
