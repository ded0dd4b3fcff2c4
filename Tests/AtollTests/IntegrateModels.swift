import Atoll
import Foundation

/// Models of the integration tests: every kind of collection, links and embedded objects.
final class FzNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
    @Persisted var count = 0
    @Persisted var score: Double?
    @Persisted var next: FzNode?
    @Persisted var children: List<FzNode>
    @Persisted var friends: MutableSet<FzNode>
    @Persisted var named: Map<String, FzNode?>
    @Persisted var numbers: List<Int>
    @Persisted var labels: MutableSet<String>
    @Persisted var weights: Map<String, Int>
    @Persisted var spot: FzSpot?
    @Persisted var spots: List<FzSpot>
}

final class FzSpot: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var near: FzNode?
    @Persisted var marks: List<Int>
}

final class FzTag: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var nodes: List<FzNode>
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var code: ObjectId?
}

/// A small deterministic generator (SplitMix64), so a failing seed replays.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
