import AtollCore
import Testing

/// What one flexible-sync session may claim and subscribe to is read from a message's header,
/// before the message is decoded (issue 21 §2).
@Suite struct FlexibleClaimLimitsTests {
    let limits = FlexibleClaimLimits(heldObjects: 10, queries: 3, queryBytes: 50)

    static func ids(_ type: String, _ count: Int) -> [ObjectID] {
        (0..<count).map { ObjectID(type: type, primaryKey: .int(Int64($0))) }
    }

    @Test func heldObjectsAreCountedAcrossTypes() {
        let within = ClientMessage.heldObjects(HeldObjects(session: 4, objects: Self.ids("A", 5) + Self.ids("B", 5))).encoded()
        #expect(limits.excess(in: within) == nil)
        let past = ClientMessage.heldObjects(HeldObjects(session: 4, objects: Self.ids("A", 5) + Self.ids("B", 6))).encoded()
        let refusal = limits.excess(in: past)
        #expect(refusal?.session == 4)
        #expect(refusal?.excess.limitName == "heldObjectsPerSession")
        #expect(refusal?.querySetVersion == nil)
    }

    @Test func theRefusalNamesTheDeclaredCount() {
        let bytes = ClientMessage.heldObjects(HeldObjects(session: 1, objects: Self.ids("A", 11))).encoded()
        #expect(limits.excess(in: bytes)?.excess == .heldObjects(count: 11, limit: 10))
    }

    @Test func subscriptionSetsAreBoundedInQueriesAndBytes() {
        func set(_ queries: [TypeQuery]) -> [UInt8] {
            ClientMessage.queryChange(QueryChange(session: 2, querySetVersion: 9, queries: queries)).encoded()
        }
        #expect(limits.excess(in: set([TypeQuery(objectType: "A", query: "x == 1")])) == nil)
        let many = limits.excess(in: set(Array(repeating: TypeQuery(objectType: "A", query: "x == 1"), count: 4)))
        #expect(many?.session == 2)
        #expect(many?.excess == .queries(count: 4, limit: 3))
        #expect(many?.querySetVersion == 9)
        let long = limits.excess(in: set([TypeQuery(objectType: "A", query: String(repeating: "x", count: 50))]))
        #expect(long?.excess.limitName == "querySetBytes")
        #expect(long?.querySetVersion == 9)
    }

    /// The first chunk of a message is enough: counts are read as declared, whatever follows.
    @Test func aPrefixOfTheMessageIsEnough() {
        let claim = ClientMessage.heldObjects(HeldObjects(session: 3, objects: Self.ids("A", 5_000))).encoded()
        #expect(limits.excess(in: claim.prefix(40))?.excess == .heldObjects(count: 5_000, limit: 10))
        let set = ClientMessage.queryChange(QueryChange(
            session: 2, querySetVersion: 9, queries: Array(repeating: TypeQuery(objectType: "A", query: "x == 1"), count: 5_000))).encoded()
        #expect(limits.excess(in: set.prefix(20))?.excess == .queries(count: 5_000, limit: 3))
        // Within the limits, a prefix tells nothing yet.
        let small = ClientMessage.heldObjects(HeldObjects(session: 3, objects: Self.ids("A", 8))).encoded()
        #expect(limits.excess(in: small.prefix(small.count / 2)) == nil)
    }

    @Test func otherMessagesPass() {
        #expect(limits.excess(in: ClientMessage.mark(Mark(session: 1, requestID: 1)).encoded()) == nil)
        #expect(limits.excess(in: [UInt8]()) == nil)
    }

    /// A claimed object the server does not have is kept unconfirmed while the claim is believed,
    /// and forgotten after.
    @Test func absentClaimsAreForgottenWhenNoLongerBelieved() {
        let state = ReplicaState()
        let fake: Set<ObjectID> = [ObjectID(type: "A", primaryKey: .int(1))]
        let believed = FlexibleSync.catchUp(held: fake, unconfirmed: fake, entries: [], ownFile: 1, state: state, matching: nil) { _ in true }
        #expect(believed.held == fake && believed.unconfirmed == fake)
        let expired = FlexibleSync.catchUp(held: fake, unconfirmed: fake, entries: [], ownFile: 1, state: state, matching: nil,
                                           keepingAbsent: false) { _ in true }
        #expect(expired.held.isEmpty && expired.unconfirmed.isEmpty)
        #expect(expired.viewChange.isEmpty, "nothing is sent about an object the server never had")
    }
}
