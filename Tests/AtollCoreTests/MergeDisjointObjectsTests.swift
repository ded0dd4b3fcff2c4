@testable import AtollCore
import Foundation
import Testing

/// `Merge.transform(local:remote:)` skips a remote changeset that changes no object the local side
/// changes (a server rebasing an upload over many entries of other devices): the answer must be the
/// one the instruction-by-instruction transform gives.
@Suite struct MergeDisjointObjectsTests {
    static let schema = ObjectSchema(name: "Item", properties: [
        Property(name: "_id", type: .string, isPrimaryKey: true),
        Property(name: "n", type: .int),
        Property(name: "tags", type: .string, collection: .list),
    ])
    static func item(_ key: String) -> ObjectID { ObjectID(type: "Item", primaryKey: .string(key)) }

    static func write(_ key: String, _ n: Int64, version: Int64, timestamp: Int64, schema: Bool = false) -> Changeset {
        var instructions: [Instruction] = schema ? [.addTable(Self.schema)] : []
        instructions += [
            .createObject(item(key)),
            .set(item(key), path: [.property("n")], value: .int(n)),
            .listInsert(item(key), path: [.property("tags")], index: 0, value: .string("t\(n)")),
        ]
        return Changeset(version: version, timestamp: timestamp, instructions: instructions)
    }

    /// The transform without either shortcut: every instruction of every pair.
    static func pairwise(local: [Changeset], remote: [Changeset]) -> (local: [Changeset], remote: [Changeset]) {
        var local = local
        var out: [Changeset] = []
        for var r in remote {
            for i in local.indices { Merge.transformEveryPair(&local[i], &r) }
            out.append(r)
        }
        return (local, out)
    }

    @Test func aRemoteSideOfOtherObjectsLeavesBothSidesAsTheyAre() {
        let local = [Self.write("mine", 1, version: 1, timestamp: 10, schema: true)]
        let remote = (0..<50).map { Self.write("other-\($0)", Int64($0), version: Int64($0 + 1), timestamp: 20, schema: $0 == 0) }
        let fast = Merge.transform(local: local, remote: remote)
        #expect(fast.local == local)
        #expect(fast.remote == remote)
        let slow = Self.pairwise(local: local, remote: remote)
        #expect(fast.local == slow.local && fast.remote == slow.remote)
    }

    @Test func sharedObjectsAmongOthersGiveThePairwiseAnswer() {
        let local = [Self.write("a", 1, version: 1, timestamp: 30), Self.write("b", 2, version: 2, timestamp: 5)]
        let remote = [
            Self.write("x", 3, version: 1, timestamp: 20),
            Self.write("a", 4, version: 2, timestamp: 20),   // loses to local's later set, list inserts both kept
            Self.write("y", 5, version: 3, timestamp: 20),
            Changeset(version: 4, timestamp: 40, instructions: [.eraseObject(Self.item("b"))]),
            Self.write("z", 6, version: 5, timestamp: 20),
        ]
        let fast = Merge.transform(local: local, remote: remote)
        let slow = Self.pairwise(local: local, remote: remote)
        #expect(fast.local == slow.local)
        #expect(fast.remote == slow.remote)
        // The shortcut is not vacuous here: the shared objects did change.
        #expect(fast.local != local)
    }
}
