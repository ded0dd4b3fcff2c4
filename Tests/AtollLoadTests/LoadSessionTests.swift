import AtollCore
@testable import AtollLoad
import Foundation
import Testing

/// The session state machine the generator runs, fed the server's messages by hand.
@Suite struct LoadSessionTests {
    let epoch = SyncEpoch(rawValue: 77)
    let file = FileIdent(ident: 5, salt: 9)

    func identified(sharesRealm: Bool, index: Int = 3) -> LoadSession {
        var session = LoadSession(id: 2, index: index, realm: .string("load-0"), sharesRealm: sharesRealm, timestampBase: 1_700_000_000_000)
        _ = session.bind(accessToken: "token")
        _ = session.receive(.identAnswer(IdentAnswer(session: 2, epoch: epoch, fileIdent: file, latestServerVersion: 0)))
        return session
    }

    func changesets(_ message: ClientMessage?) -> [UploadChangeset] {
        guard case .upload(let upload)? = message else { return [] }
        return upload.changesets
    }

    func download(_ entries: [(version: Int64, file: Int64, changeset: Changeset)], progress: Int64) -> ServerMessage {
        .download(Download(session: 2, epoch: epoch, changesets: entries.map {
            DownloadChangeset(serverVersion: $0.version, originFileIdent: $0.file, originTimestamp: $0.changeset.timestamp, lastClientVersion: 0,
                              changeset: $0.changeset)
        }, progress: DownloadProgress(serverVersion: progress, latestServerVersion: progress, downloadableBytes: 0)))
    }

    @Test func bindSendsBindAndIdentOfANewFileAtOnce() {
        var session = LoadSession(id: 2, index: 0, realm: .string("load-0"), sharesRealm: false)
        let messages = session.bind(accessToken: "token")
        #expect(messages == [
            .bind(Bind(session: 2, target: .partition(.string("load-0")), accessToken: "token")),
            .ident(Ident(session: 2, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)),
        ])
        #expect(session.state == .binding)
        #expect(session.write(due: 1) == nil, "nothing is written before the ident answer")
        let outcome = session.receive(.identAnswer(IdentAnswer(session: 2, epoch: epoch, fileIdent: file, latestServerVersion: 0)))
        #expect(outcome.identified)
        #expect(session.state == .active)
        #expect(session.fileIdent == file)
    }

    @Test func theFirstWriteAddsTheTypeAndEachWriteIsAnUploadOnTheNewestServerVersion() throws {
        var session = identified(sharesRealm: false)
        let first = changesets(session.write(due: 1_000_000_000))
        #expect(first.count == 1)
        #expect(first[0].clientVersion == 1 && first[0].lastServerVersion == 0)
        #expect(first[0].changeset.instructions.first == .addTable(LoadWrite.schema))
        #expect(first[0].changeset.timestamp == 1_700_000_001_000)
        #expect(LoadWrite(decoding: first[0].changeset) == LoadWrite(writer: 3, ordinal: 0, due: 1_000_000_000))
        _ = session.receive(download([(4, 99, Changeset(version: 1, timestamp: 1, instructions: []))], progress: 4))
        let second = changesets(session.write(due: 2_000_000_000))
        #expect(second.map(\.clientVersion) == [2], "a realm of its own: the server skips the session's own unechoed prefix")
        #expect(second[0].lastServerVersion == 4)
        #expect(!second[0].changeset.instructions.contains(.addTable(LoadWrite.schema)))
        #expect(session.inFlight == 2)
    }

    @Test func anAcknowledgementGivesTheDueTimesOfTheWritesItCovers() {
        var session = identified(sharesRealm: false)
        for due in [UInt64(10), 20, 30] { _ = session.write(due: due) }
        let outcome = session.receive(.uploadAck(UploadAck(session: 2, epoch: epoch, clientVersion: 2, serverVersion: 2)))
        #expect(outcome.acknowledged == [10, 20])
        #expect(session.receive(.uploadAck(UploadAck(session: 2, epoch: epoch, clientVersion: 3, serverVersion: 3))).acknowledged == [30])
        #expect(session.receive(.uploadAck(UploadAck(session: 2, epoch: epoch, clientVersion: 3, serverVersion: 3))).acknowledged == [])
        #expect(session.inFlight == 0)
    }

    /// In a shared realm an upload carries every write not yet seen back, as the SDK's pending
    /// changesets do, with the same bytes (and commit time) each time.
    @Test func aSharedRealmReSendsWhatHasNotComeBack() {
        var session = identified(sharesRealm: true)
        let first = changesets(session.write(due: 5_000_000))
        let second = changesets(session.write(due: 6_000_000))
        #expect(second.map(\.clientVersion) == [1, 2])
        #expect(second[0].changeset == first[0].changeset)
        // Version 1 comes back (its echo), with another client's write after it.
        let other = LoadWrite(writer: 8, ordinal: 0, due: 5_500_000).changeset(version: 1, isFirst: true, padding: 0, timestamp: 3)
        let outcome = session.receive(download([(1, file.ident, first[0].changeset), (2, 6, other)], progress: 2))
        #expect(outcome.downloaded == [LoadWrite(writer: 8, ordinal: 0, due: 5_500_000)])
        #expect(session.echoedVersion == 1)
        let third = changesets(session.write(due: 7_000_000))
        #expect(third.map(\.clientVersion) == [2, 3])
        #expect(third.allSatisfy { $0.lastServerVersion == 2 })
    }

    @Test func downloadsOfOtherClientsDataAreCountedApart() {
        var session = identified(sharesRealm: true)
        let foreign = Changeset(version: 1, timestamp: 1, instructions: [.createObject(ObjectID(type: "Task", primaryKey: .int(1)))])
        let outcome = session.receive(download([(1, 6, foreign)], progress: 1))
        #expect(outcome.downloaded.isEmpty && outcome.foreign == 1)
        #expect(session.serverVersion == 1)
    }

    @Test func anErrorAResetOrAnotherEpochEndsTheSession() {
        var errored = identified(sharesRealm: false)
        let failure = errored.receive(.error(ErrorMessage(code: .badChangeset, message: "no", action: .protocolViolation, session: 2, epoch: epoch)))
        #expect(failure.failure?.contains("204") == true)
        #expect(errored.write(due: 1) == nil)

        var warned = identified(sharesRealm: false)
        _ = warned.receive(.error(ErrorMessage(code: .serverWarning, message: "careful", action: .warning, session: 2, epoch: epoch)))
        #expect(warned.isActive, "a warning leaves the session going")

        var moved = identified(sharesRealm: false)
        #expect(moved.receive(.uploadAck(UploadAck(session: 2, epoch: 78, clientVersion: 0, serverVersion: 1))).failure != nil)

        var reset = LoadSession(id: 2, index: 0, realm: .string("r"), sharesRealm: false)
        _ = reset.bind(accessToken: "t")
        _ = reset.receive(.resetRequired(ResetRequired(session: 2, epoch: epoch, reason: .epochChanged, recoveryAllowed: true, message: "m")))
        guard case .failed = reset.state else { Issue.record("a reset before ident must fail the session"); return }
    }

    @Test func anAcknowledgementOfAVersionNeverWrittenFailsTheSession() {
        var session = identified(sharesRealm: false)
        _ = session.write(due: 1)
        #expect(session.receive(.uploadAck(UploadAck(session: 2, epoch: epoch, clientVersion: 5, serverVersion: 5))).failure != nil)
    }

    @Test func aWriteRoundTripsThroughItsBinaryForm() throws {
        let write = LoadWrite(writer: 1_234, ordinal: 56, due: 9_876_543_210)
        let changeset = write.changeset(version: 57, isFirst: false, padding: 100, timestamp: 42)
        let decoded = try Changeset(decoding: changeset.encoded())
        #expect(LoadWrite(decoding: decoded) == write)
        #expect(changeset.encoded().count > 100)
    }
}
