import Atoll
import AtollTesting
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
