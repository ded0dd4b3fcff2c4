import Atoll
import Foundation

/// Prints one measured figure in the bench's line format.
func report(_ system: String, _ workload: String, _ value: Double, _ unit: String) {
    print("\(system) \(workload) \(String(format: value >= 100 ? "%.0f" : "%.3f", value)) \(unit)")
}

/// Seconds taken by `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A small seeded generator (SplitMix64), so every run works on the same data.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
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
        var rng = SeededGenerator(state: seed)
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
