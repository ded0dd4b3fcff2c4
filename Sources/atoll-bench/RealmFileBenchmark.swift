import Atoll
import AtollTesting
import Foundation

/// W9: opening a file Realm wrote converts it into Atoll (issue 22). The file holds 100,000
/// `Task` objects of W1's schema, written by realm-core (Tools/realm-fixtures/README.md) and kept
/// compressed in `Benchmarks/tasks_w1_100k.realm.gz`. The baseline is raw SQLite inserting the
/// same rows, made in memory beforehand, into W1's table in one transaction.
///
/// Prints the time ratio and the peak memory the conversion added above the process's resident
/// size before it (Linux: `VmHWM` after resetting it through `/proc/self/clear_refs`).
struct RealmFileBenchmark {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Benchmarks/tasks_w1_100k.realm.gz")
    let count = 100_000
    let rounds = Int(ProcessInfo.processInfo.environment["ATOLL_BENCH_ROUNDS"] ?? "") ?? 3

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-w9-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("tasks.realm")
        try Gzip.decompress(Self.fixture, to: source)

        // The conversion first, while the process holds little else, for its memory figure.
        var best = (raw: Double.infinity, atoll: Double.infinity)
        var peak = 0
        for round in 0..<rounds {
            let url = folder.appendingPathComponent("round\(round).realm")
            try FileManager.default.copyItem(at: source, to: url)
            let before = Self.residentKiB()
            Self.resetPeak()
            let time = try measure {
                let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [BenchTask.self]))
                guard realm.objects(BenchTask.self).count == count else {
                    throw RawSQLite.Failure(description: "the converted realm has \(realm.objects(BenchTask.self).count) tasks, not \(count)")
                }
            }
            peak = max(peak, Self.peakKiB() - before)
            best.atoll = min(best.atoll, time)
            if round == 0 { try check(url) }
        }

        let rows = Self.rows(count)
        for round in 0..<rounds {
            let sqlite = try RawSQLite(path: folder.appendingPathComponent("raw\(round).sqlite").path)
            best.raw = min(best.raw, try measure { try sqlite.insertAll(rows) })
        }
        report("sqlite", "W9", Double(count) / best.raw, "obj/s")
        report("atoll", "W9", Double(count) / best.atoll, "obj/s")
        report("atoll", "W9_time_ratio", best.atoll / best.raw, "x")
        if peak > 0 { report("atoll", "W9_peak_rss_above_baseline", Double(peak) / 1024, "MiB") }
    }

    /// The converted objects are the generator's: a few by primary key.
    private func check(_ url: URL) throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [BenchTask.self]))
        let rows = Self.rows(count)
        for n in [0, 1, 50_000, count - 1] {
            let row = rows[n]
            guard let task = realm.object(ofType: BenchTask.self, forPrimaryKey: row.preparedId),
                  task.name == row.name, task.owner == row.owner, task.done == row.done, task.priority == row.priority
            else { throw RawSQLite.Failure(description: "converted task \(n) differs from the generator's") }
        }
    }

    /// The generator's rows (Tools/realm-fixtures/README.md): one splitmix64 stream seeded with 42.
    static func rows(_ count: Int) -> [TaskRow] {
        var state: UInt64 = 42
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let letters = Array("abcdefghijklmnopqrstuvwxyz ")
        return (0..<count).map { n in
            var id: [UInt8] = [0x65, 0, 0, 0]
            withUnsafeBytes(of: UInt64(n).bigEndian) { id += $0 }
            let name = String((0..<20).map { _ in letters[Int(next() % 27)] })
            let owner = "owner-\(next() % 100)"
            let done = next() % 2 == 0
            let priority = Int(next() % 10)
            return TaskRow(id: id, preparedId: ObjectId(bytes: id), name: name, owner: owner, done: done, priority: priority)
        }
    }

    private static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    static func residentKiB() -> Int { status("VmRSS") }
    static func peakKiB() -> Int { status("VmHWM") }
    static func resetPeak() { try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8) }
}
