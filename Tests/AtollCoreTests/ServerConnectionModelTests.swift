@testable import AtollCore
import Foundation
import Testing

/// The server's connection machine (`ServerConnectionLogic` and each session's `ServerSession`)
/// against a small reference model, over random sequences of what clients send (hello, binds,
/// idents, uploads with good and bad versions, marks, held objects, query changes, token
/// refreshes, unbinds — to bound, unbound and ended ids) and of sessions the server ends itself,
/// the way the shell (`SyncConnection`) drives it: a refusal naming a session ends it, one naming
/// none closes the connection.
///
/// After every step: the disposition is the model's, the bound sessions, their states and query
/// set versions are the model's, and the ended sessions (whose late messages are dropped, whose
/// unbind is answered with their epoch) are the model's. A failure names the sequence's seed:
/// `ATOLL_MODEL_SEED=<seed>` replays it.
@Suite struct ServerConnectionModelTests {
    static let capacity = 3

    struct ModelSession: Equatable {
        var flexible: Bool
        var identified = false
        var heldObjects = false
        var hasQueryChange = false
        var querySetVersion: Int64 = 0
    }

    /// What the model expects of a message.
    enum Expected: Equatable {
        case handle, unbound, drop, answerUnbound(SyncEpoch)
        case refuse(ServerErrorCode, session: SessionID?)
    }

    struct Model {
        var hello = false
        var sessions: [SessionID: ModelSession] = [:]
        var ended: [(id: SessionID, epoch: SyncEpoch)] = []

        func endedEpoch(_ id: SessionID) -> SyncEpoch? { ended.first { $0.id == id }?.epoch }
        mutating func forget(_ id: SessionID) { ended.removeAll { $0.id == id } }
        mutating func end(_ id: SessionID, epoch: SyncEpoch) {
            guard sessions.removeValue(forKey: id) != nil else { return }
            forget(id)
            ended.append((id, epoch))
            if ended.count > ServerConnectionModelTests.capacity { ended.removeFirst() }
        }

        mutating func receive(_ message: ClientMessage) -> Expected {
            if let id = message.session, let epoch = endedEpoch(id) {
                switch message {
                case .bind: forget(id)
                case .unbind: forget(id); return .answerUnbound(epoch)
                default: return .drop
                }
            }
            if case .unbind(let id) = message, sessions[id] != nil {
                sessions[id] = nil
                return .unbound
            }
            if case .hello(let hello) = message {
                if self.hello { return .refuse(.messageOutOfOrder, session: nil) }
                guard hello.versions.overlaps(ProtocolVersion.supported) else { return .refuse(.unsupportedProtocolVersion, session: nil) }
                self.hello = true
                return .handle
            }
            guard hello else { return .refuse(.messageOutOfOrder, session: nil) }
            switch message {
            case .hello, .ping: return .handle
            case .bind(let bind):
                if sessions[bind.session] != nil { return .refuse(.sessionAlreadyBound, session: bind.session) }
                sessions[bind.session] = ModelSession(flexible: bind.target == .flexible)
                return .handle
            case .unbind(let id):
                return .refuse(.unknownSession, session: id)
            default:
                guard let id = message.session, var s = sessions[id] else { return .refuse(.unknownSession, session: message.session) }
                let refusal: ServerErrorCode?
                switch message {
                case .ident(let ident):
                    if s.identified { refusal = .messageOutOfOrder }
                    else if ident.lastServerVersion < 0 { refusal = .badServerVersion }
                    else { refusal = nil; s.identified = true; s.querySetVersion = ident.querySetVersion }
                case .upload(let upload):
                    if !s.identified { refusal = .messageOutOfOrder } else {
                        var previous: Int64 = 0
                        var found: ServerErrorCode?
                        for c in upload.changesets {
                            if c.clientVersion <= previous { found = .badClientVersion; break }
                            if c.lastServerVersion < 0 { found = .badServerVersion; break }
                            previous = c.clientVersion
                        }
                        refusal = found
                    }
                case .mark:
                    refusal = s.identified ? nil : .messageOutOfOrder
                case .queryChange(let change):
                    if !s.flexible || !s.identified || !s.heldObjects { refusal = .messageOutOfOrder }
                    else if change.querySetVersion > s.querySetVersion || (!s.hasQueryChange && change.querySetVersion >= s.querySetVersion) {
                        refusal = nil; s.hasQueryChange = true; s.querySetVersion = change.querySetVersion
                    } else { refusal = .messageOutOfOrder }
                case .heldObjects:
                    if !s.flexible || !s.identified || s.heldObjects { refusal = .messageOutOfOrder } else { refusal = nil; s.heldObjects = true }
                default:
                    refusal = nil  // refreshAccessToken
                }
                if let refusal { return .refuse(refusal, session: id) }
                sessions[id] = s
                return .handle
            }
        }
    }

    static func randomMessage(_ rng: inout SplitMix64) -> ClientMessage {
        let id = SessionID(UInt64.random(in: 1...4, using: &rng))
        func version() -> Int64 { Int64.random(in: -1...6, using: &rng) }
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<4: return .hello(ClientHello(versions: Bool.random(using: &rng) ? ProtocolVersion.supported : 1...1, userAgent: "model"))
        case 4..<8: return .ping(Ping(timestamp: 1))
        case 8..<24:
            return .bind(Bind(session: id, target: Bool.random(using: &rng) ? .flexible : .partition(.string("p")), accessToken: "t"))
        case 24..<38:
            return .ident(Ident(session: id, fileIdent: .unassigned, lastServerVersion: Int.random(in: 0..<10, using: &rng) == 0 ? -1 : version(),
                                epoch: .none, querySetVersion: Int64.random(in: 0...3, using: &rng)))
        case 38..<58:
            let count = Int.random(in: 1...3, using: &rng)
            var cv = Int64.random(in: 0...3, using: &rng)
            let changesets = (0..<count).map { _ -> UploadChangeset in
                cv += Int64.random(in: Int.random(in: 0..<8, using: &rng) == 0 ? -1...0 : 1...2, using: &rng)
                return UploadChangeset(ProtocolFixtures.changeset(cv), lastServerVersion: Int.random(in: 0..<12, using: &rng) == 0 ? -1 : 0)
            }
            return .upload(Upload(session: id, changesets: changesets))
        case 58..<66: return .mark(Mark(session: id, requestID: 1))
        case 66..<74: return .heldObjects(HeldObjects(session: id, objects: []))
        case 74..<84: return .queryChange(QueryChange(session: id, querySetVersion: Int64.random(in: 0...5, using: &rng), queries: []))
        case 84..<88: return .refreshAccessToken(RefreshAccessToken(session: id, accessToken: "n"))
        default: return .unbind(id)
        }
    }

    static func expected(of disposition: ServerConnectionLogic.Disposition) -> Expected {
        switch disposition {
        case .handle: .handle
        case .unbound: .unbound
        case .drop: .drop
        case .answerUnbound(let epoch): .answerUnbound(epoch)
        case .refuse(let error): .refuse(error.code, session: error.session)
        }
    }

    /// One sequence; returns what went wrong (empty: nothing) and the trace.
    static func run(seed: UInt64, steps: Int) -> (violations: [String], trace: [String]) {
        var rng = SplitMix64(seed: seed)
        var logic = ServerConnectionLogic(maxEndedSessions: capacity)
        var model = Model()
        var trace: [String] = []
        var violations: [String] = []
        var nextEpoch: UInt64 = 1
        // Most sequences start well: hello first.
        if Int.random(in: 0..<10, using: &rng) > 0 { _ = logic.receive(.hello(ClientHello(userAgent: "model"))); _ = model.receive(.hello(ClientHello(userAgent: "model"))) }
        for step in 0..<steps {
            if Int.random(in: 0..<10, using: &rng) == 0 {
                // The server ends a session itself (an operator, a reset, a failed integration).
                let id = SessionID(UInt64.random(in: 1...4, using: &rng))
                let epoch = SyncEpoch(rawValue: nextEpoch)
                nextEpoch += 1
                trace.append("\(step): server ends \(id.rawValue)")
                let record = logic.endSession(id, epoch: epoch)
                if (record != nil) != (model.sessions[id] != nil) { violations.append("\(step): endSession of \(id.rawValue) found \(record != nil)") }
                model.end(id, epoch: epoch)
            } else {
                let message = randomMessage(&rng)
                let got = logic.receive(message)
                let want = model.receive(message)
                trace.append("\(step): \(message.kindName) \(message.session?.rawValue ?? 0) → \(got)")
                if expected(of: got) != want { violations.append("\(step): \(message) → \(got), the model says \(want)") }
                if case .unbound(let record) = got, record.id != message.session { violations.append("\(step): unbound the wrong record") }
                if case .refuse(let error) = got {
                    // The shell: a refusal naming a session ends it; one naming none closes the connection.
                    guard let id = error.session else { break }
                    let epoch = SyncEpoch(rawValue: nextEpoch)
                    nextEpoch += 1
                    logic.endSession(id, epoch: epoch)
                    model.end(id, epoch: epoch)
                }
            }
            // The records agree with the model.
            if Set(logic.sessions.keys) != Set(model.sessions.keys) {
                violations.append("\(step): bound \(logic.sessions.keys.map(\.rawValue).sorted()), the model \(model.sessions.keys.map(\.rawValue).sorted())")
            }
            for (id, session) in model.sessions {
                guard let record = logic.sessions[id] else { continue }
                if (record.state == .identified) != session.identified || record.querySetVersion != session.querySetVersion
                    || (record.target == .flexible) != session.flexible {
                    violations.append("\(step): session \(id.rawValue) is \(record.state)/\(record.querySetVersion), the model \(session)")
                }
            }
            for (id, epoch) in model.ended where logic.ended.epoch(of: id) != epoch {
                violations.append("\(step): ended \(id.rawValue) in \(epoch) per the model, \(String(describing: logic.ended.epoch(of: id)))")
            }
            if logic.ended.count != model.ended.count { violations.append("\(step): \(logic.ended.count) ended, the model \(model.ended.count)") }
            if !violations.isEmpty { break }
        }
        return (violations, trace)
    }

    @Test func randomSequencesFollowTheModel() {
        runModelSequences("ServerConnectionModelTests") { Self.run(seed: $0, steps: 120) }
    }

    /// The model test can fail: a machine that forgets an ended session's epoch is caught.
    @Test func theModelCatchesAMachineThatForgetsEndedSessions() {
        var logic = ServerConnectionLogic(maxEndedSessions: Self.capacity)
        var model = Model()
        for message: ClientMessage in [.hello(ClientHello(userAgent: "m")), .bind(Bind(session: 1, target: .flexible, accessToken: "t"))] {
            _ = logic.receive(message)
            _ = model.receive(message)
        }
        model.end(1, epoch: 9)
        logic.endSession(1, epoch: 9)
        // A broken machine: the late ident is validated (unknown session) instead of dropped.
        var broken = logic
        let late = ClientMessage.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none))
        let wrong: ServerConnectionLogic.Disposition
        do { try broken.validate(late); wrong = .handle } catch { wrong = .refuse(error) }
        #expect(Self.expected(of: wrong) != model.receive(late))
        #expect(logic.receive(late) == .drop)
        #expect(logic.receive(.unbind(1)) == .answerUnbound(9))
        #expect(logic.receive(.unbind(1)) == .refuse(ProtocolError(.unknownSession, "unbind of session 1 that is not bound", session: 1)))
    }
}

/// What a session's record decides alone: an upload's shape, the answer to a refused one, and
/// when its client file is recorded as seen.
@Suite struct ServerSessionRecordTests {
    static func identified(_ target: SyncTarget = .partition(.string("p"))) -> ServerSession {
        var session = ServerSession(bind: Bind(session: 3, target: target, accessToken: "t"))
        try! session.validate(.ident(Ident(session: 3, fileIdent: .unassigned, lastServerVersion: 4, epoch: .none)))
        session.accept(file: FileIdent(ident: 11, salt: 1), ownClientVersion: 2)
        return session
    }

    @Test func anAcceptedIdentSetsTheCursorAndTheSettledVersion() {
        var session = Self.identified()
        #expect(session.file.ident == 11)
        #expect(session.cursor == 4 && session.lastOwnClientVersion == 2 && session.settledClientVersion == 2)
        session.delivered(9, ownClientVersion: 5)
        session.delivered(7, ownClientVersion: nil)
        #expect(session.cursor == 9 && session.lastOwnClientVersion == 5 && session.settledClientVersion == 2)
    }

    @Test func anUploadIsStampedWithTheClientsFileOrRefusedForItsShape() {
        let session = Self.identified()
        let good = Upload(session: 3, changesets: [UploadChangeset(ProtocolFixtures.changeset(3, fileIdent: 99), lastServerVersion: 4),
                                                   UploadChangeset(ProtocolFixtures.changeset(4, fileIdent: 99), lastServerVersion: 4)])
        guard case .ready(let prepared) = session.prepare(good, flexible: false, epoch: 2) else {
            Issue.record("refused")
            return
        }
        #expect(prepared.base == 4 && prepared.lastClientVersion == 4)
        #expect(prepared.changesets.allSatisfy { $0.fileIdent == 11 })
        let mixed = Upload(session: 3, changesets: [UploadChangeset(ProtocolFixtures.changeset(3), lastServerVersion: 4),
                                                    UploadChangeset(ProtocolFixtures.changeset(4), lastServerVersion: 3)])
        guard case .refused(let error) = session.prepare(mixed, flexible: false, epoch: 2) else { Issue.record("accepted"); return }
        #expect(error.code == .badChangeset && error.session == 3 && error.epoch == 2)
        let asymmetric = Upload(session: 3, changesets: [UploadChangeset(
            Changeset(version: 5, timestamp: 1, instructions: [.addTable(ObjectSchema(name: "Event", properties: [], isAsymmetric: true))]),
            lastServerVersion: 4)])
        guard case .refused(let refusal) = session.prepare(asymmetric, flexible: false, epoch: 2) else { Issue.record("accepted"); return }
        #expect(refusal.message.contains("asymmetric type Event"))
        guard case .ready = session.prepare(asymmetric, flexible: true, epoch: 2) else { Issue.record("refused in flexible sync"); return }
    }

    @Test(arguments: [
        (MergeError.Code.badBaseVersion, ServerErrorCode.badServerVersion, ErrorAction?.none),
        (.nonIncreasingClientVersions, .badClientVersion, nil),
        (.missingOwnChangeset, .badChangeset, .retryLater),
        (.schemaViolation, .badChangeset, nil),
    ] as [(MergeError.Code, ServerErrorCode, ErrorAction?)])
    func aRefusedUploadsAnswer(_ c: (MergeError.Code, ServerErrorCode, ErrorAction?)) {
        let answer = ServerSession.answer(to: MergeError(c.0, "no"), session: 3, epoch: 2)
        #expect(answer.code == c.1 && answer.session == 3 && answer.epoch == 2)
        if let action = c.2 { #expect(answer.action == action) }
    }

    @Test func theClientFileIsRecordedAsSeenAtIdentsAndAtMostEvery10sFromUploadsAndAMinuteOtherwise() {
        var unassigned = ServerSession(bind: Bind(session: 3, target: .flexible, accessToken: "t"))
        let early = unassigned.recordsSeen(now: Date(), integrated: true)
        #expect(!early, "not before the file is assigned")
        var session = Self.identified()
        let t0 = Date(timeIntervalSince1970: 1_000_000)
        var recorded: [Bool] = []
        for (seconds, integrated, fromUpload) in [(0.0, true, false), (0, true, false), (30, false, false), (61, false, false),
                                                 (62, true, true), (70, true, true), (73, true, true)] {
            recorded.append(session.recordsSeen(now: t0.addingTimeInterval(seconds), integrated: integrated, fromUpload: fromUpload))
        }
        // An ident's is always recorded; downloads once a minute; uploads every 10 s.
        #expect(recorded == [true, true, false, true, true, false, true])
    }
}
