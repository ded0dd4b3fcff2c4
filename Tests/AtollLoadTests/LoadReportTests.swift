@testable import AtollLoad
import Foundation
import Testing

@Suite struct LoadReportTests {
    func phase(acknowledged: Int = 100, downloads: Int = 1_900) -> LoadReport.Phase {
        var histogram = LatencyHistogram()
        for v in 1...100 { histogram.record(microseconds: UInt64(v)) }  // exact below 256 µs
        return LoadReport.Phase(
            rate: 100, warmupSeconds: 1, durationSeconds: 1, writes: 100, skipped: 0, acknowledged: acknowledged, expectedDownloads: 1_900,
            downloads: downloads, uploadsPerSecond: Double(acknowledged), downloadsPerSecond: Double(downloads),
            acknowledgement: LoadReport.Latency(histogram), download: LoadReport.Latency(histogram), failedSessions: 0, failures: [],
            generatorCPUSeconds: 0.5)
    }

    func report(_ phases: [LoadReport.Phase]) -> LoadReport {
        LoadReport(workload: "W11", date: "2026-11-29T06:00:00Z", machine: .init(cores: 2, loadAverage: 1.5), sessionsRequested: 2_000,
                   sessionsActive: 2_000, connections: 40, connectionsFailed: 0, users: 40, sessionsPerRealm: 20, descriptorLimit: 1_048_576,
                   generatorBytesBefore: 10 << 20, generatorBytesBound: 18 << 20, phases: phases)
    }

    @Test func theJSONReadsBackAsTheSameReport() throws {
        let original = report([phase(), phase(acknowledged: 99)])
        let data = try original.json()
        #expect(try JSONDecoder().decode(LoadReport.self, from: data) == original)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let phases = try #require(object["phases"] as? [[String: Any]])
        let latency = try #require(phases[0]["download"] as? [String: Any])
        #expect(latency["p99"] as? Double == 0.099)
        #expect(latency["p50"] as? Double == 0.05)
    }

    @Test func linesNameTheWorkloadTheFigureAndTheUnit() {
        let lines = report([phase()]).lines()
        #expect(lines.contains("atoll W11_sessions 2000 sessions"))
        #expect(lines.contains("atoll W11_generator_memory_per_session 4.096 KiB"))
        #expect(lines.contains("atoll W11_download_p99 0.099 ms"))
        #expect(lines.contains("atoll W11_incomplete 0.000 writes"))
        #expect(lines.allSatisfy { $0.split(separator: " ").count == 4 })
    }

    @Test func aLoadRunsJSONIsABenchRunThatCompareReads() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let machine = BenchResults.Machine(cores: 2, loadAverage: 1, fdatasyncMilliseconds: 0.1)
        var slower = phase()
        slower.download.p99 *= 3
        for (name, run) in [("a", report([phase()])), ("b", report([slower]))] {
            try BenchResults(date: Date(timeIntervalSince1970: 0), commit: name, suites: ["load"], machine: machine,
                             figures: run.figures(), load: run).write(to: folder.appendingPathComponent(name).path)
        }
        let a = try BenchResults.read(from: folder.appendingPathComponent("a").path)
        let b = try BenchResults.read(from: folder.appendingPathComponent("b").path)
        #expect(a.load == report([phase()]))
        let comparison = BenchResults.comparison(a, b)
        #expect(comparison.regressions.map(\.figure.workload) == ["W11_download_p99"])
        #expect(comparison.changes.count == report([phase()]).figures().count)
        // An older run's file, from before load runs kept their report, still reads.
        let old = try JSONSerialization.data(withJSONObject: [
            "date": "1970-01-01T00:00:00Z", "suites": ["local"], "figures": [] as [Any],
            "machine": ["cores": 2, "loadAverage": 1, "fdatasyncMilliseconds": 0.1]])
        try old.write(to: folder.appendingPathComponent("old"))
        #expect(try BenchResults.read(from: folder.appendingPathComponent("old").path).load == nil)
    }

    @Test func sessionCountsAreBetterHigherAndFailedSessionsLower() {
        let figures = report([phase()]).figures()
        #expect(figures.first { $0.workload == "W11_sessions" }?.higherIsBetter == true)
        #expect(figures.first { $0.workload == "W11_failed_sessions" }?.higherIsBetter == false)
        #expect(figures.first { $0.workload == "W11_download_p99" }?.higherIsBetter == false)
    }

    @Test func aPhaseIsCompleteOnlyWhenEveryWriteWasAcknowledgedAndDownloaded() {
        #expect(phase().isComplete)
        #expect(!phase(acknowledged: 99).isComplete)
        #expect(!phase(downloads: 1_899).isComplete)
    }
}
