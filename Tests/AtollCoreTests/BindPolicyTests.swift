import AtollCore
import Testing

/// The server's bind and token-refresh decisions (``BindPolicy``), from values alone.
struct BindPolicyTests {
    static let partition = Bind(session: 3, target: .partition(.string("home")), accessToken: "t")
    static let flexible = Bind(session: 4, target: .flexible, accessToken: "t")

    @Test func aBindNamesItsRealmWhenTheAppSyncsThatWay() {
        let home = BindPolicy.Target.realm(path: PartitionValue.string("home").path)
        #expect(BindPolicy.realmPath(Self.partition, appKind: .partition, appID: "a") == home)
        #expect(BindPolicy.realmPath(Self.flexible, appKind: .flexible, appID: "a") == .realm(path: FlexibleSync.realmPath))
        // Not configured (development mode decides on first use): either.
        #expect(BindPolicy.realmPath(Self.partition, appKind: nil, appID: "a") == home)
        #expect(BindPolicy.realmPath(Self.flexible, appKind: nil, appID: "a") == .realm(path: FlexibleSync.realmPath))
    }

    @Test func aBindOfTheOtherKindIsABadSyncTargetOfItsSession() {
        for (bind, kind, words) in [(Self.partition, BindPolicy.AppKind.flexible, "uses flexible sync"),
                                    (Self.flexible, .partition, "uses partition-based sync")] {
            guard case .refuse(let refusal) = BindPolicy.realmPath(bind, appKind: kind, appID: "tasks") else {
                Issue.record("\(bind.target) on a \(kind) app was accepted")
                continue
            }
            #expect(refusal.code == .badSyncTarget && refusal.session == bind.session)
            #expect(refusal.message.contains(words) && refusal.message.contains("\"tasks\""), "\(refusal.message)")
        }
    }

    @Test func refusalsSayWhenToComeBack() {
        let disabled = BindPolicy.syncDisabled(Self.partition, appID: "tasks")
        #expect(disabled.code == .syncDisabled && disabled.action == .retryLater && disabled.tryAgainAfterMilliseconds == 5_000)
        for limit in BindPolicy.Limit.allCases {
            let refusal = BindPolicy.refusal(limit, value: 7, userID: "u1", session: 9, detail: limit == .realmsPerUser ? "user u1 has 7 realms" : nil)
            #expect(refusal.code == .tryAgainLater && refusal.action == .retryLater && refusal.session == 9)
            // Sessions and connections free up as clients leave; realms only when an operator acts.
            #expect(refusal.tryAgainAfterMilliseconds == (limit == .realmsPerUser ? 3_600_000 : 30_000), "\(limit)")
            #expect(refusal.message.contains(limit == .realmsPerUser ? "user u1 has 7 realms (limits.realmsPerUser)" : "limit 7"), "\(refusal.message)")
        }
        let denied = BindPolicy.partitionNotReadable(Self.partition, partition: .string("home"), userID: "u1", appID: "tasks")
        #expect(denied.code == .permissionDenied && denied.action == ServerErrorCode.permissionDenied.defaultAction && denied.message.contains("u1"))
    }

    @Test func aRefreshedTokenOfAnotherUserEndsTheSession() {
        #expect(BindPolicy.refresh(tokenUser: "u1", sessionUser: "u1", session: 3, epoch: .none) == nil)
        let refusal = BindPolicy.refresh(tokenUser: "u2", sessionUser: "u1", session: 3, epoch: .none)
        #expect(refusal?.code == .invalidAccessToken && refusal?.action == .protocolViolation && refusal?.session == 3)
    }
}
