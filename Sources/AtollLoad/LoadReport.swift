import Foundation

/// What a load run measured, as JSON (`--json`) and as the bench's `atoll WORKLOAD VALUE UNIT` lines.
public struct LoadReport: Codable, Hashable, Sendable {
    public struct Machine: Codable, Hashable, Sendable {
        public var cores: Int
        /// The 1-minute load average when the run started (other processes share the cores).
        public var loadAverage: Double
    }

    /// Latencies of one kind in milliseconds.
    public struct Latency: Codable, Hashable, Sendable {
        public var count: UInt64
        public var p50: Double
        public var p99: Double
        public var p999: Double
        public var max: Double
        public var mean: Double

        public init(_ histogram: LatencyHistogram) {
            count = histogram.count
            p50 = Double(histogram.percentile(50)) / 1000
            p99 = Double(histogram.percentile(99)) / 1000
            p999 = Double(histogram.percentile(99.9)) / 1000
            max = Double(histogram.maxValue) / 1000
            mean = histogram.mean / 1000
        }
    }

    /// One rate held for a warm-up and a measured duration.
    public struct Phase: Codable, Hashable, Sendable {
        /// Writes per second the schedule asked for, all sessions together.
        public var rate: Double
        public var warmupSeconds: Double
        public var durationSeconds: Double
        /// Writes due in the measured window that were sent (sessions that had failed send none).
        public var writes: Int
        /// Writes due in the window that no session could send (it had failed).
        public var skipped: Int
        /// Of `writes`, those the server acknowledged before the drain ended.
        public var acknowledged: Int
        /// Downloads of the window's writes by the other sessions of their realms: expected, received.
        public var expectedDownloads: Int
        public var downloads: Int
        /// Uploads acknowledged and downloads received per second of the window.
        public var uploadsPerSecond: Double
        public var downloadsPerSecond: Double
        /// Schedule → `uploadAck`, and schedule → another session's download of the write.
        public var acknowledgement: Latency
        public var download: Latency
        /// Sessions that failed by the end of the phase, and the first reasons.
        public var failedSessions: Int
        public var failures: [String]
        /// CPU seconds the generator used during the phase (user + system).
        public var generatorCPUSeconds: Double?

        /// Every write acknowledged and downloaded by every other session, no session failed.
        public var isComplete: Bool {
            skipped == 0 && acknowledged == writes && downloads == expectedDownloads && failedSessions == 0
        }
    }

    public var workload: String
    public var date: String
    public var machine: Machine
    public var sessionsRequested: Int
    /// Sessions identified before the first phase.
    public var sessionsActive: Int
    public var connections: Int
    public var connectionsFailed: Int
    public var users: Int
    public var sessionsPerRealm: Int
    /// The descriptor limit after raising it to the hard limit.
    public var descriptorLimit: UInt64
    /// The generator's resident memory before connecting and once every session was bound.
    public var generatorBytesBefore: Int
    public var generatorBytesBound: Int
    public var phases: [Phase]

    /// The generator's own memory per active session (connections included).
    public var generatorBytesPerSession: Double {
        sessionsActive == 0 ? 0 : Double(max(0, generatorBytesBound - generatorBytesBefore)) / Double(sessionsActive)
    }

    /// The JSON form, keys sorted so two runs' files diff line by line.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// The bench's lines for this run: `atoll <workload>_<figure> <value> <unit>`.
    public func lines() -> [String] {
        func line(_ name: String, _ value: Double, _ unit: String) -> String {
            "atoll \(workload)_\(name) \(String(format: value >= 100 ? "%.0f" : "%.3f", value)) \(unit)"
        }
        var lines = [
            line("sessions", Double(sessionsActive), "sessions"),
            line("generator_memory_per_session", generatorBytesPerSession / 1024, "KiB"),
        ]
        for (i, phase) in phases.enumerated() {
            let suffix = phases.count > 1 ? "_r\(i + 1)" : ""
            let latency = phase.expectedDownloads > 0 ? phase.download : phase.acknowledgement
            let kind = phase.expectedDownloads > 0 ? "download" : "ack"
            lines.append(line("rate\(suffix)", phase.rate, "writes/s"))
            lines.append(line("\(kind)_p50\(suffix)", latency.p50, "ms"))
            lines.append(line("\(kind)_p99\(suffix)", latency.p99, "ms"))
            lines.append(line("\(kind)_p999\(suffix)", latency.p999, "ms"))
            lines.append(line("uploads\(suffix)", phase.uploadsPerSecond, "uploads/s"))
            if phase.expectedDownloads > 0 { lines.append(line("downloads\(suffix)", phase.downloadsPerSecond, "downloads/s")) }
            lines.append(line("incomplete\(suffix)", Double(phase.writes - phase.acknowledged + phase.expectedDownloads - phase.downloads + phase.skipped), "writes"))
            lines.append(line("failed_sessions\(suffix)", Double(phase.failedSessions), "sessions"))
        }
        return lines
    }
}
