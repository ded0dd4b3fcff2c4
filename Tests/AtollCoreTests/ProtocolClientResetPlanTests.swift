import AtollCore
import Foundation
import Testing

/// Every branch of the client-reset decision (R-RESET-4), without a server or a file.
@Suite struct ProtocolClientResetPlanTests {
    typealias Request = ClientSession.ResetRequest
    static let epochChanged = Request(reason: .epochChanged, message: "sync was terminated", recoveryAllowed: true, serverEpoch: 9)
    static let noRecovery = Request(reason: .epochChanged, message: "sync was terminated", recoveryAllowed: false, serverEpoch: 9)
    static let schemaBroken = Request(reason: .breakingSchemaChange, message: "a property changed type", recoveryAllowed: true, serverEpoch: 9)
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    func plan(_ request: Request, _ mode: ClientResetModeKind, previous: String? = nil) -> ClientResetPlan {
        ClientSession.resetPlan(for: request, mode: mode, previous: previous.map { AppliedReset(action: $0, date: Self.date) })
    }

    func isManual(_ plan: ClientResetPlan, saying words: String) -> Bool {
        guard case .manual(let message) = plan else { return false }
        return message.contains(words)
    }

    @Test func eachModeTakesItsOwnAction() {
        #expect(plan(Self.epochChanged, .manual) == .manual(message: "the server requires a client reset (epochChanged): sync was terminated"))
        #expect(plan(Self.epochChanged, .discardUnsyncedChanges)
            == .automatic(recover: false, message: "the server requires a client reset (epochChanged): sync was terminated", note: ""))
        #expect(plan(Self.epochChanged, .recoverUnsyncedChanges)
            == .automatic(recover: true, message: "the server requires a client reset (epochChanged): sync was terminated", note: ""))
        #expect(plan(Self.epochChanged, .recoverOrDiscardUnsyncedChanges)
            == .automatic(recover: true, message: "the server requires a client reset (epochChanged): sync was terminated", note: ""))
    }

    @Test(arguments: [ClientResetModeKind.discardUnsyncedChanges, .recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges])
    func aBreakingSchemaChangeGoesToTheManualHandlerInEveryAutomaticMode(_ mode: ClientResetModeKind) {
        #expect(isManual(plan(Self.schemaBroken, mode), saying: "after a breaking schema change no automatic mode can run, so \(mode.rawValue) falls back"))
    }

    @Test func recoveryTurnedOffOnTheServer() {
        #expect(isManual(plan(Self.noRecovery, .recoverUnsyncedChanges), saying: "client recovery turned off, so recoverUnsyncedChanges falls back"))
        #expect(plan(Self.noRecovery, .recoverOrDiscardUnsyncedChanges) == .automatic(
            recover: false, message: "the server requires a client reset (epochChanged): sync was terminated",
            note: "the server has client recovery turned off, so the unsynced changes were discarded"))
        #expect(plan(Self.noRecovery, .discardUnsyncedChanges) == plan(Self.epochChanged, .discardUnsyncedChanges))
    }

    @Test func theSameActionAppliedAndNeverAcknowledgedIsNotRepeated() {
        // recover-or-discard that recovered last time discards this time.
        guard case .automatic(false, _, let note) = plan(Self.epochChanged, .recoverOrDiscardUnsyncedChanges, previous: "recover") else {
            Issue.record("recover-or-discard after an unacknowledged recovery should discard")
            return
        }
        #expect(note.contains("was never acknowledged by the server, so the unsynced changes were discarded this time"))
        // Every other repeat goes to the manual handler instead of looping.
        #expect(isManual(plan(Self.epochChanged, .recoverUnsyncedChanges, previous: "recover"), saying: "recoverUnsyncedChanges falls back to the manual handler instead of looping"))
        #expect(isManual(plan(Self.epochChanged, .discardUnsyncedChanges, previous: "discard"), saying: "discardUnsyncedChanges falls back to the manual handler instead of looping"))
        #expect(isManual(plan(Self.noRecovery, .recoverOrDiscardUnsyncedChanges, previous: "discard"), saying: "instead of looping"))
        // A different action before does not count.
        #expect(plan(Self.epochChanged, .recoverUnsyncedChanges, previous: "discard") == plan(Self.epochChanged, .recoverUnsyncedChanges))
        #expect(plan(Self.epochChanged, .discardUnsyncedChanges, previous: "recover") == plan(Self.epochChanged, .discardUnsyncedChanges))
    }
}
