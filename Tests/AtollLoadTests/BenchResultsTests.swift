import AtollLoad
import Foundation
import Testing

/// `atoll-bench --json` results and `atoll-bench compare`: figures matched by workload and unit,
/// sweeps by their median, better and WORSE marked by each unit's direction.
@Suite struct BenchResultsTests {
    static let machine = BenchResults.Machine(cores: 2, loadAverage: 0.5, fdatasyncMilliseconds: 3)

    static func results(_ figures: [(String, String, Double, String)]) -> BenchResults {
        BenchResults(date: Date(timeIntervalSince1970: 1_800_000_000), commit: "abc1234", suites: ["local"], machine: machine,
                     figures: figures.map { BenchResults.Figure(system: $0.0, workload: $0.1, value: $0.2, unit: $0.3) })
    }

    @Test func aComparisonMarksRegressionsByTheUnitsDirection() {
        let a = Self.results([("atoll", "W1", 150_000, "obj/s"), ("sqlite", "W1", 350_000, "obj/s"), ("atoll", "W4_p50", 2.0, "ms"),
                              ("atoll", "W7_server_memory_per_session", 6.8, "KiB"), ("atoll", "W8_speedup_2", 1.0, "x"),
                              ("atoll", "gone", 1, "s")])
        let b = Self.results([("atoll", "W1", 120_000, "obj/s"), ("sqlite", "W1", 352_000, "obj/s"), ("atoll", "W4_p50", 1.5, "ms"),
                              ("atoll", "W7_server_memory_per_session", 9.0, "KiB"), ("atoll", "W8_speedup_2", 1.8, "x"),
                              ("atoll", "new", 1, "s")])
        let comparison = BenchResults.comparison(a, b)
        #expect(comparison.changes.map(\.figure.workload) == ["W1", "W1", "W4_p50", "W7_server_memory_per_session", "W8_speedup_2"])
        #expect(Set(comparison.regressions.map(\.figure.workload)) == ["W1", "W7_server_memory_per_session"])
        #expect(comparison.regressions.allSatisfy { $0.figure.system == "atoll" }, "the baseline moved 0.6 %: not a regression")
        let text = comparison.text
        #expect(text.contains("atoll W1 obj/s 150000 → 120000  B/A 0.800  WORSE"), "\(text)")
        #expect(text.contains("atoll W4_p50 ms 2.000 → 1.500  B/A 0.750  better"), "\(text)")
        #expect(text.contains("W8_speedup_2 x 1.000 → 1.800  B/A 1.800  better"), "\(text)")
        #expect(text.contains("atoll gone s: only in A") && text.contains("atoll new s: only in B"))
        #expect(text.hasPrefix("A: abc1234 "), "\(text)")
    }

    @Test func aSweepComparesByItsMedian() {
        let a = Self.results([("atoll", "W8_p99", 10, "ms"), ("atoll", "W8_p99", 30, "ms"), ("atoll", "W8_p99", 20, "ms")])
        let b = Self.results([("atoll", "W8_p99", 19, "ms"), ("atoll", "W8_p99", 21, "ms")])
        let change = try! #require(BenchResults.comparison(a, b).changes.first)
        #expect(change.before == 20 && change.after == 20)
        #expect(BenchResults.comparison(a, b).regressions.isEmpty)
    }

    @Test func resultsSurviveTheirJSON() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("a.json").path
        let results = Self.results([("atoll", "W1", 150_000, "obj/s")])
        try results.write(to: path)
        #expect(try BenchResults.read(from: path) == results)
    }

    @Test func theMachinesFactsAreMeasured() {
        let facts = BenchResults.machineFacts(samples: 3)
        #expect(facts.cores >= 1)
        #expect(facts.loadAverage >= 0)
        #expect(facts.fdatasyncMilliseconds >= 0 && facts.fdatasyncMilliseconds.isFinite)
    }
}
