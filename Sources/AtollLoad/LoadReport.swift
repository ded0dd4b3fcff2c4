import Foundation

/// What a load run measured, as JSON (`--json`) and as the bench's `atoll WORKLOAD VALUE UNIT` lines.
package struct LoadReport: Codable, Hashable, Sendable {
    package struct Machine: Codable, Hashable, Sendable {
        package var cores: Int
        /// The 1-minute load average when the run started (other processes share the cores).
        package var loadAverage: Double
    }

    /// Latencies of one kind in milliseconds.
    package struct Latency: Codable, Hashable, Sendable {
        package var count: UInt64
        package var p50: Double
        package var p99: Double
        package var p999: Double
        package var max: Double
        package var mean: Double

        package init(_ histogram: LatencyHistogram) {
            count = histogram.count
            p50 = Double(histogram.percentile(50)) / 1000
            p99 = Double(histogram.percentile(99)) / 1000
            p999 = Double(histogram.percentile(99.9)) / 1000
            max = Double(histogram.maxValue) / 1000
            mean = histogram.mean / 1000
        }
    }

    /// One rate held for a warm-up and a measured duration.
    package struct Phase: Codable, Hashable, Sendable {
        /// Writes per second the schedule asked for, all sessions together.
        package var rate: Double
        package var warmupSeconds: Double
        package var durationSeconds: Double
        /// Writes due in the measured window that were sent (sessions that had failed send none).
        package var writes: Int
        /// Writes due in the window that no session could send (it had failed).
        package var skipped: Int
        /// Of `writes`, those the server acknowledged before the drain ended.
        package var acknowledged: Int
        /// Downloads of the window's writes by the other sessions of their realms: expected, received.
        package var expectedDownloads: Int
        package var downloads: Int
        /// Uploads acknowledged and downloads received per second of the window.
        package var uploadsPerSecond: Double
        package var downloadsPerSecond: Double
        /// Schedule → `uploadAck`, and schedule → another session's download of the write.
        package var acknowledgement: Latency
        package var download: Latency
        /// Sessions that failed by the end of the phase, and the first reasons.
        package var failedSessions: Int
        package var failures: [String]
        /// CPU seconds the generator used during the phase (user + system).
        package var generatorCPUSeconds: Double?

        /// Every write acknowledged and downloaded by every other session, no session failed.
        package var isComplete: Bool {
            skipped == 0 && acknowledged == writes && downloads == expectedDownloads && failedSessions == 0
        }
    }

    package var workload: String
    package var date: String
    package var machine: Machine
    package var sessionsRequested: Int
    /// Sessions identified before the first phase.
    package var sessionsActive: Int
    package var connections: Int
    package var connectionsFailed: Int
    package var users: Int
    package var sessionsPerRealm: Int
    /// The descriptor limit after raising it to the hard limit.
    package var descriptorLimit: UInt64
    /// The generator's resident memory before connecting and once every session was bound.
    package var generatorBytesBefore: Int
    package var generatorBytesBound: Int
    package var phases: [Phase]

    /// The generator's own memory per active session (connections included).
    package var generatorBytesPerSession: Double {
        sessionsActive == 0 ? 0 : Double(max(0, generatorBytesBound - generatorBytesBefore)) / Double(sessionsActive)
    }

    /// The JSON form, keys sorted so two runs' files diff line by line.
    package func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// The bench's figures for this run, `<workload>_<figure>` with their units (what `--json`
    /// keeps for `atoll-bench compare`, and what `lines()` prints).
    package func figures() -> [BenchResults.Figure] {
        func figure(_ name: String, _ value: Double, _ unit: String) -> BenchResults.Figure {
            BenchResults.Figure(system: "atoll", workload: "\(workload)_\(name)", value: value, unit: unit)
        }
        var figures = [
            figure("sessions", Double(sessionsActive), "sessions"),
            figure("generator_memory_per_session", generatorBytesPerSession / 1024, "KiB"),
        ]
        for (i, phase) in phases.enumerated() {
            let suffix = phases.count > 1 ? "_r\(i + 1)" : ""
            let latency = phase.expectedDownloads > 0 ? phase.download : phase.acknowledgement
            let kind = phase.expectedDownloads > 0 ? "download" : "ack"
            figures.append(figure("rate\(suffix)", phase.rate, "writes/s"))
            figures.append(figure("\(kind)_p50\(suffix)", latency.p50, "ms"))
            figures.append(figure("\(kind)_p99\(suffix)", latency.p99, "ms"))
            figures.append(figure("\(kind)_p999\(suffix)", latency.p999, "ms"))
            figures.append(figure("uploads\(suffix)", phase.uploadsPerSecond, "uploads/s"))
            if phase.expectedDownloads > 0 { figures.append(figure("downloads\(suffix)", phase.downloadsPerSecond, "downloads/s")) }
            figures.append(figure("incomplete\(suffix)", Double(phase.writes - phase.acknowledged + phase.expectedDownloads - phase.downloads + phase.skipped), "writes"))
            figures.append(figure("failed_sessions\(suffix)", Double(phase.failedSessions), "sessions"))
        }
        return figures
    }

    /// The bench's lines for this run: `atoll <workload>_<figure> <value> <unit>`.
    package func lines() -> [String] {
        figures().map { "\($0.system) \($0.workload) \(String(format: $0.value >= 100 ? "%.0f" : "%.3f", $0.value)) \($0.unit)" }
    }
}
