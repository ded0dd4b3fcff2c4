import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of `atoll-bench`: the figures it printed (`atoll W1 149000 obj/s`), the machine it ran
/// on and when, as JSON (`--json PATH`), so a later run can be compared with it
/// (`atoll-bench compare A.json B.json`) and a change that makes a workload slower is seen in the
/// session it is made.
///
/// ```swift
/// let before = try BenchResults.read(from: "main.json")
/// let after = try BenchResults.read(from: "branch.json")
/// print(BenchResults.comparison(before, after).text)
/// ```
package struct BenchResults: Codable, Sendable, Hashable {
    package struct Figure: Codable, Sendable, Hashable {
        /// `atoll`, or the baseline's name (`sqlite`).
        package var system: String
        package var workload: String
        package var value: Double
        package var unit: String

        package init(system: String, workload: String, value: Double, unit: String) {
            self.system = system
            self.workload = workload
            self.value = value
            self.unit = unit
        }

        /// Whether a larger value is better: rates are; times, sizes and ratios of times are not.
        package var higherIsBetter: Bool {
            let unit = unit.lowercased()
            return unit.hasSuffix("/s") || unit == "x" && workload.lowercased().contains("speedup")
                || unit == "sessions" && !workload.lowercased().contains("failed")
        }
    }

    /// What the figures depend on besides the code.
    package struct Machine: Codable, Sendable, Hashable {
        package var cores: Int
        /// The 1-minute load average when the run started.
        package var loadAverage: Double
        /// The median time of `fdatasync` after a 4 KiB write in the run's data folder, in ms.
        package var fdatasyncMilliseconds: Double

        package init(cores: Int, loadAverage: Double, fdatasyncMilliseconds: Double) {
            self.cores = cores
            self.loadAverage = loadAverage
            self.fdatasyncMilliseconds = fdatasyncMilliseconds
        }
    }

    package var date: Date
    /// The commit the binary was built from, when known (`ATOLL_BENCH_COMMIT` or `git rev-parse`).
    package var commit: String?
    package var suites: [String]
    package var machine: Machine
    package var figures: [Figure]
    /// A load run's whole report (`atoll-bench load --json`): phases, failures, connections.
    package var load: LoadReport?

    package init(date: Date, commit: String?, suites: [String], machine: Machine, figures: [Figure] = [], load: LoadReport? = nil) {
        self.date = date
        self.commit = commit
        self.suites = suites
        self.machine = machine
        self.figures = figures
        self.load = load
    }

    package func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    package static func read(from path: String) throws -> BenchResults {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(BenchResults.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    // MARK: Comparing

    /// One figure in both runs.
    package struct Change: Sendable, Hashable {
        package var figure: Figure
        package var before: Double
        package var after: Double
        /// after ÷ before.
        package var ratio: Double { before == 0 ? (after == 0 ? 1 : .infinity) : after / before }
        /// How much better (> 0) or worse (< 0) the second run is, as a fraction of the first:
        /// for a rate the gain, for a time or a size the saving.
        package var improvement: Double {
            guard before != 0 else { return 0 }
            return figure.higherIsBetter ? ratio - 1 : 1 - ratio
        }
    }

    /// The figures of `a` and `b` matched by system, workload and unit, in `b`'s order; the
    /// figures only one run has are listed apart. A figure printed several times (a sweep)
    /// compares by its median.
    package static func comparison(_ a: BenchResults, _ b: BenchResults, threshold: Double = 0.10) -> Comparison {
        typealias Key = String
        func key(_ f: Figure) -> Key { "\(f.system) \(f.workload) \(f.unit)" }
        func medians(_ figures: [Figure]) -> ([Key], [Key: (Figure, Double)]) {
            var order: [Key] = []
            var values: [Key: (Figure, [Double])] = [:]
            for figure in figures {
                let k = key(figure)
                if values[k] == nil { order.append(k); values[k] = (figure, []) }
                values[k]!.1.append(figure.value)
            }
            return (order, values.mapValues { ($0.0, median($0.1)) })
        }
        let (_, before) = medians(a.figures)
        let (order, after) = medians(b.figures)
        var changes: [Change] = []
        var onlyAfter: [Figure] = []
        for k in order {
            let (figure, value) = after[k]!
            if let (_, old) = before[k] { changes.append(Change(figure: figure, before: old, after: value)) } else { onlyAfter.append(figure) }
        }
        let onlyBefore = a.figures.filter { after[key($0)] == nil }
        return Comparison(a: a, b: b, changes: changes, onlyBefore: onlyBefore, onlyAfter: onlyAfter, threshold: threshold)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    package struct Comparison: Sendable {
        package var a: BenchResults
        package var b: BenchResults
        package var changes: [Change]
        package var onlyBefore: [Figure]
        package var onlyAfter: [Figure]
        /// A change beyond it (a fraction) is marked better or WORSE.
        package var threshold: Double

        /// The changes worse than the threshold.
        package var regressions: [Change] { changes.filter { $0.improvement < -threshold } }

        /// A table: each figure, both values, the ratio and a mark; the machines' facts first, since
        /// a figure measured under other load or another disk is not the code's doing.
        package var text: String {
            func facts(_ r: BenchResults) -> String {
                let m = r.machine
                return "\(r.commit ?? "?") \(ISO8601DateFormatter().string(from: r.date)): \(m.cores) cores, load \(String(format: "%.2f", m.loadAverage)), fdatasync p50 \(String(format: "%.2f", m.fdatasyncMilliseconds)) ms"
            }
            var lines = ["A: \(facts(a))", "B: \(facts(b))"]
            for change in changes {
                let mark = change.improvement > threshold ? "better" : change.improvement < -threshold ? "WORSE" : ""
                lines.append(String(format: "%@ %@ %@ %@ → %@  B/A %.3f  %@", change.figure.system, change.figure.workload,
                                    change.figure.unit, Self.number(change.before), Self.number(change.after), change.ratio, mark)
                    .trimmingCharacters(in: .whitespaces))
            }
            for figure in onlyBefore { lines.append("\(figure.system) \(figure.workload) \(figure.unit): only in A") }
            for figure in onlyAfter { lines.append("\(figure.system) \(figure.workload) \(figure.unit): only in B") }
            return lines.joined(separator: "\n")
        }

        static func number(_ value: Double) -> String { String(format: value >= 100 ? "%.0f" : "%.3f", value) }
    }

    // MARK: The machine

    /// The machine's facts now: cores, load average, and the median of `samples` fdatasyncs of a
    /// 4 KiB write in `folder`.
    package static func machineFacts(folder: String = NSTemporaryDirectory(), samples: Int = 15) -> Machine {
        var load = [Double](repeating: 0, count: 3)
        let loadAverage = getloadavg(&load, 3) > 0 ? load[0] : .nan
        return Machine(cores: ProcessInfo.processInfo.activeProcessorCount, loadAverage: loadAverage,
                       fdatasyncMilliseconds: fdatasyncMedian(folder: folder, samples: samples))
    }

    static func fdatasyncMedian(folder: String, samples: Int) -> Double {
        let path = (folder as NSString).appendingPathComponent("atoll-bench-fdatasync-\(getpid())")
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        guard fd >= 0 else { return .nan }
        defer { close(fd); unlink(path) }
        let page = [UInt8](repeating: 0xA5, count: 4096)
        var times: [Double] = []
        for i in 0..<max(1, samples) {
            let written = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4096, off_t(i % 16) * 4096) }
            guard written == 4096 else { return .nan }
            let start = ProcessFacts.now()
            #if canImport(Glibc)
            guard fdatasync(fd) == 0 else { return .nan }
            #else
            guard fsync(fd) == 0 else { return .nan }
            #endif
            times.append(Double(ProcessFacts.now() - start) / 1e6)
        }
        return median(times)
    }
}
