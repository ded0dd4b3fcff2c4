@testable import AtollCore
import Foundation
import Testing

/// A client whose copy went back in time (restored from a backup, commits lost in a power loss)
/// reuses client versions the server holds: each side must see it and ask for a client reset,
/// never take a new commit for a duplicate (issue 21 §6).
@Suite struct ClientHistoryRewindTests {
    let a = MergeFixture.id("a")

    func setCount(_ n: Int64, version: Int64, at t: Int64) -> Changeset {
        MergeFixture.changeset([.set(a, path: [.property("count")], value: .int(n))], version: version, timestamp: t)
    }

    func created(version: Int64 = 1, at t: Int64 = 1) -> Changeset {
        MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(a)], version: version, timestamp: t)
    }

    // MARK: Server: uploads

    @Test func aClientVersionIntegratedWithAnotherCommitTimeIsRefused() throws {
        var history = ServerHistory()
        try history.integrate(UploadBatch(fileIdent: 1, baseServerVersion: 0, changesets: [created(), setCount(1, version: 2, at: 2)]))
        // The device lost version 2 and committed a new one under the same version.
        let rewound = UploadBatch(fileIdent: 1, baseServerVersion: 1, changesets: [setCount(7, version: 2, at: 9)])
        let code = refusal { try history.integrate(rewound) }
        #expect(code == .clientHistoryDiverged)
        // The same changeset re-sent (a lost acknowledgement) is still a duplicate.
        #expect(try history.integrate(UploadBatch(fileIdent: 1, baseServerVersion: 1, changesets: [setCount(1, version: 2, at: 2)])).isEmpty)
        #expect(history.version == 2)
    }

    @Test func aClientVersionTheServerNeverIntegratedBelowItsNewestIsRefused() throws {
        // The file's versions 1 and 3 are in the history (2 was a download the device applied).
        let history = [
            HistoryEntry(serverVersion: 1, changeset: withFile(created(), 1)),
            HistoryEntry(serverVersion: 2, changeset: withFile(setCount(3, version: 3, at: 3), 1)),
        ]
        let rewound = UploadBatch(fileIdent: 1, baseServerVersion: 0, changesets: [setCount(7, version: 2, at: 9)], settledClientVersion: 0)
        let code = refusal { try ServerIntegrator.integrate(rewound, over: history, lastIntegratedClientVersion: 3) }
        #expect(code == .clientHistoryDiverged)
        // Without what the client had settled, only commit times are compared (the old answer).
        var unknown = rewound
        unknown.settledClientVersion = nil
        #expect(try ServerIntegrator.integrate(unknown, over: history, lastIntegratedClientVersion: 3).isEmpty)
        // At or below what the client had settled when it identified, it is a re-sent duplicate.
        var settled = rewound
        settled.settledClientVersion = 2
        #expect(try ServerIntegrator.integrate(settled, over: history.dropFirst(2), lastIntegratedClientVersion: 3).isEmpty)
    }

    /// The code of the merge error `body` throws (nil when it throws none).
    func refusal<T>(_ body: () throws -> T) -> MergeError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as MergeError {
            #expect(error.message.contains("went back in time"), "\(error)")
            return error.code
        } catch {
            Issue.record("not a merge error: \(error)")
            return nil
        }
    }

    func withFile(_ changeset: Changeset, _ file: Int64) -> Changeset {
        var changeset = changeset
        changeset.fileIdent = file
        return changeset
    }

    // MARK: Server: idents

    @Test func anIdentBelowWhatTheClientHadIntegratedIsAReset() {
        let file = FileIdent(ident: 3, salt: 99)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let facts = IdentFacts(appID: "tasks", epoch: 7, latestServerVersion: 10,
                               knownFile: .init(salt: 99, lastSeen: now, integratedServerVersion: 8), recoveryAllowed: true)
        func decide(_ version: Int64) -> IdentDecision {
            IdentPolicy.decide(Ident(session: 2, fileIdent: file, lastServerVersion: version, epoch: 7), facts: facts, now: now)
        }
        #expect(decide(8) == .accept(assignFile: false))
        #expect(decide(10) == .accept(assignFile: false))
        guard case .reset(let reset) = decide(5) else { Issue.record("\(decide(5))"); return }
        #expect(reset.reason == .historyRestored && reset.recoveryAllowed)
        #expect(reset.message.contains("went back in time"), "\(reset.message)")
    }

    // MARK: Client: downloads

    static let file = FileIdent(ident: 7, salt: 99)

    static func activeSession() -> ClientSession {
        var s = ClientSession(id: 1, target: .partition(.string("tasks")), accessToken: "token", saved: ClientSyncState(), unqueued: [],
                              configuration: .init(backoff: ReconnectBackoff(seed: 42, initialMilliseconds: 1000, maximumMilliseconds: 60_000)))
        _ = s.start(connectionIsOpen: true)
        _ = s.received(.identAnswer(IdentAnswer(session: 1, epoch: 5, fileIdent: file, latestServerVersion: 0)))
        return s
    }

    static func ownEntry(_ version: Int64, committedAt timestamp: Int64, at serverVersion: Int64) -> ServerMessage {
        .download(Download(session: 1, epoch: 5, changesets: [
            DownloadChangeset(serverVersion: serverVersion, originFileIdent: file.ident, originTimestamp: timestamp,
                              lastClientVersion: version, changeset: ProtocolFixtures.changeset(version)),
        ], progress: DownloadProgress(serverVersion: serverVersion, latestServerVersion: serverVersion, downloadableBytes: 0)))
    }

    static func asksForReset(_ actions: [ClientSession.Action]) -> Bool {
        actions.contains { if case .requestClientReset(let r) = $0 { r.message.contains("went back in time") } else { false } }
    }

    @Test func anOwnEntryWithAnotherCommitTimeThanThePendingChangesetIsAReset() {
        var s = Self.activeSession()
        let pending = ProtocolFixtures.changeset(1)
        _ = s.localChangesetCommitted(pending)
        // Its own echo is the acknowledgement…
        var echoed = s
        #expect(!Self.asksForReset(echoed.received(Self.ownEntry(1, committedAt: pending.timestamp, at: 1))))
        // …another commit under that version (the one the file lost) is not.
        #expect(Self.asksForReset(s.received(Self.ownEntry(1, committedAt: pending.timestamp - 5, at: 1))))
    }

    @Test func anOwnEntryOfAVersionTheFileNeverCommittedIsAReset() {
        var s = Self.activeSession()
        _ = s.localChangesetCommitted(ProtocolFixtures.changeset(1))
        #expect(Self.asksForReset(s.received(Self.ownEntry(4, committedAt: 1, at: 1))))
    }
}
