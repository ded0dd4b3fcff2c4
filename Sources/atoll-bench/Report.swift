import Atoll
import AtollCore
import AtollLoad
import AtollTesting
import Foundation

/// Prints one measured figure in the bench's line format, and keeps it for `--json`.
func report(_ system: String, _ workload: String, _ value: Double, _ unit: String) {
    print("\(system) \(workload) \(String(format: value >= 100 ? "%.0f" : "%.3f", value)) \(unit)")
    Figures.shared.withLock { $0.append(BenchResults.Figure(system: system, workload: workload, value: value, unit: unit)) }
}

/// The figures this run printed.
enum Figures {
    static let shared = Locked<[BenchResults.Figure]>([])
}

/// The commit the run measures: `ATOLL_BENCH_COMMIT`, else `git rev-parse --short HEAD` in the
/// working folder, else nil.
func benchCommit() -> String? {
    if let commit = ProcessInfo.processInfo.environment["ATOLL_BENCH_COMMIT"] { return commit }
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    git.arguments = ["git", "rev-parse", "--short", "HEAD"]
    let output = Pipe()
    git.standardOutput = output
    git.standardError = FileHandle.nullDevice
    guard (try? git.run()) != nil else { return nil }
    git.waitUntilExit()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return git.terminationStatus == 0 && !text.isEmpty ? text : nil
}

/// Seconds taken by `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}


/// The rows of the Task workloads.
struct TaskRow {
    var id: [UInt8]
    /// The same id as an ObjectId, made before timing as the raw side's bytes are.
    var preparedId: ObjectId
    var name: String
    var owner: String
    var done: Bool
    var priority: Int

    static func generate(_ count: Int, seed: UInt64 = 42) -> [TaskRow] {
        var rng = SeededRandom(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyz ")
        return (0..<count).map { i in
            var id = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: UInt64(i).bigEndian) { id.replaceSubrange(4..<12, with: $0) }
            id[0] = 0x65
            let name = String((0..<20).map { _ in letters[Int(rng.next() % UInt64(letters.count))] })
            return TaskRow(id: id, preparedId: ObjectId(bytes: id), name: name, owner: "owner-\(rng.next() % 100)", done: rng.next() % 2 == 0,
                           priority: Int(rng.next() % 10))
        }
    }
}
