import Atoll
import AtollTesting
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


/// The seeded generator these tests were written with (AtollTesting's SplitMix64).
typealias SeededGenerator = SeededRandom
