import AtollCore
import Foundation
import Testing

/// The server's answer to an ident, decided from values (no store, no clock, no sockets).
@Suite struct ProtocolIdentPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let realmEpoch = SyncEpoch(rawValue: 7)
    static let file = FileIdent(ident: 3, salt: 99)

    /// A realm with history up to version 10 that knows `file`, last seen a minute ago.
    static func facts(_ change: (inout IdentFacts) -> Void = { _ in }) -> IdentFacts {
        var facts = IdentFacts(
            appID: "tasks", epoch: realmEpoch, latestServerVersion: 10,
            knownFile: IdentFacts.KnownFile(salt: file.salt, lastSeen: now.addingTimeInterval(-60)), recoveryAllowed: true)
        change(&facts)
        return facts
    }

    static func ident(file: FileIdent = file, version: Int64 = 4, epoch: SyncEpoch = realmEpoch) -> Ident {
        Ident(session: 2, fileIdent: file, lastServerVersion: version, epoch: epoch)
    }

    static func decide(_ ident: Ident = ident(), _ facts: IdentFacts = facts()) -> IdentDecision {
        IdentPolicy.decide(ident, facts: facts, now: now)
    }

    /// The reset the decision asks for, or nil.
    static func reset(_ decision: IdentDecision) -> ResetRequired? {
        if case .reset(let reset) = decision { return reset }
        return nil
    }

    func expectReset(_ decision: IdentDecision, _ reason: ResetReason, _ fragment: String,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        guard let reset = Self.reset(decision) else {
            Issue.record("no reset: \(decision)", sourceLocation: sourceLocation)
            return
        }
        #expect(reset.reason == reason, sourceLocation: sourceLocation)
        #expect(reset.message.contains(fragment), "\(reset.message)", sourceLocation: sourceLocation)
        #expect(reset.session == 2 && reset.epoch == Self.realmEpoch, sourceLocation: sourceLocation)
    }

    @Test func aKnownClientWithinTheHistoryIsAccepted() {
        #expect(Self.decide() == .accept(assignFile: false))
        #expect(Self.decide(Self.ident(version: 10)) == .accept(assignFile: false))
    }

    @Test func aNewClientIsAcceptedAndGetsAFile() {
        let fresh = Self.ident(file: .unassigned, version: 0, epoch: .none)
        #expect(Self.decide(fresh, Self.facts { $0.knownFile = nil }) == .accept(assignFile: true))
        // A compacted history is no reason to reset a client that has nothing yet.
        #expect(Self.decide(fresh, Self.facts { $0.compactedThrough = 8 }) == .accept(assignFile: true))
    }

    @Test(arguments: [
        (ResetReason.epochChanged, "sync was terminated and enabled again"),
        (.historyRestored, "restored from a backup"),
        (.breakingSchemaChange, "breaking schema change"),
    ])
    func anotherEpochResetsWithTheReasonItLastChangedFor(_ reason: ResetReason, _ why: String) {
        let decision = Self.decide(Self.ident(epoch: SyncEpoch(rawValue: 5)), Self.facts { $0.epochReason = reason })
        expectReset(decision, reason, why)
        #expect(Self.reset(decision)?.message.contains("the client's copy has") == true)
    }

    @Test func aClientWithHistoryButNoEpochResetsAndOneWithNothingDoesNot() {
        expectReset(Self.decide(Self.ident(file: .unassigned, version: 3, epoch: .none)), .epochChanged, "terminated")
        expectReset(Self.decide(Self.ident(epoch: .none)), .epochChanged, "terminated")
        #expect(Self.decide(Self.ident(file: .unassigned, version: 0, epoch: .none)) == .accept(assignFile: true))
    }

    @Test func theEpochIsCheckedBeforeTheFile() {
        expectReset(Self.decide(Self.ident(epoch: SyncEpoch(rawValue: 5)), Self.facts { $0.knownFile = nil }), .epochChanged, "terminated")
    }

    @Test func anUnknownFileOrAWrongSaltResets() {
        expectReset(Self.decide(Self.ident(), Self.facts { $0.knownFile = nil }), .unknownFileIdent, "does not know file ident 3")
        expectReset(Self.decide(Self.ident(file: FileIdent(ident: 3, salt: 1))), .unknownFileIdent, "does not know file ident 3")
    }

    @Test func aClientAwayLongerThanTheMaxOfflineTimeResets() {
        let away = Self.facts { $0.maxOfflineTime = 30 }
        expectReset(Self.decide(Self.ident(), away), .historyCompacted, "last seen 60 s ago, longer than the app's maximum offline time")
        #expect(Self.decide(Self.ident(), Self.facts { $0.maxOfflineTime = 61 }) == .accept(assignFile: false))
        // Without a maximum offline time the server keeps all history: any absence is fine.
        let longAgo = Self.facts { $0.knownFile?.lastSeen = Self.now.addingTimeInterval(-10 * 365 * 86_400) }
        #expect(Self.decide(Self.ident(), longAgo) == .accept(assignFile: false))
    }

    @Test func aClientBehindTheCompactedHistoryResets() {
        let compacted = Self.facts { $0.compactedThrough = 6 }
        expectReset(Self.decide(Self.ident(version: 4), compacted), .historyCompacted, "the history up to 6 is compacted")
        #expect(Self.decide(Self.ident(version: 6), compacted) == .accept(assignFile: false))
    }

    @Test func aClientAheadOfTheHistoryResetsAsRestored() {
        expectReset(Self.decide(Self.ident(version: 11)), .historyRestored, "integrated server version 11, the history ends at 10")
    }

    @Test(arguments: [true, false])
    func aResetSaysWhetherRecoveryIsAllowed(_ allowed: Bool) {
        let decision = Self.decide(Self.ident(version: 11), Self.facts { $0.recoveryAllowed = allowed })
        #expect(Self.reset(decision)?.recoveryAllowed == allowed)
    }

    @Test func identWhileSyncIsDisabledIsRefused() {
        let decision = Self.decide(Self.ident(version: 11), Self.facts { $0.syncEnabled = false })
        guard case .refuse(let error) = decision else {
            Issue.record("not refused: \(decision)")
            return
        }
        #expect(error.code == .syncDisabled && error.action == .retryLater && error.tryAgainAfterMilliseconds == 5_000)
        #expect(error.session == 2 && error.message.contains("app \"tasks\""))
    }

    @Test func aUserWithoutRoomForAnotherClientFileIsRefusedForAnHour() {
        let error = IdentPolicy.clientFilesRefusal(
            Self.ident(file: .unassigned, version: 0, epoch: .none), facts: Self.facts(), detail: "user u has 5 client files")
        #expect(error.code == .tryAgainLater && error.action == .retryLater && error.tryAgainAfterMilliseconds == 3_600_000)
        #expect(error.session == 2 && error.epoch == Self.realmEpoch)
        #expect(error.message == "user u has 5 client files: an operator must remove some first")
    }
}
