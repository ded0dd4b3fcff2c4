@testable import AtollCore
import Foundation
import Testing

/// The client session machine under random sequences of what happens to a session — the app
/// committing, suspending and resuming from another thread (the request recorded at once, the
/// machine taking it later), messages delivered or lost with the connection, reconnect timers,
/// an access token expiring and its refresh failing, other devices' changes — against a
/// simulated server that records what it integrates. Invariants are checked after every step;
/// at the end the session is resumed and left to settle, and the server must hold every commit
/// exactly once, in order.
///
/// A failure names the sequence's seed: `ATOLL_MODEL_SEED=<seed>` replays the run (`ATOLL_MODEL_DEBUG=1`
/// prints the end state).
@Suite struct ClientSessionModelTests {
    static let file = FileIdent(ident: 7, salt: 99)
    static let epoch: SyncEpoch = 5

    /// The server's side of the file's session, with the rules it checks.
    struct Server {
        enum Bind: Equatable { case none, bound, identified, endedByServer }
        var bind = Bind.none
        var history: [DownloadChangeset] = []
        var integratedClientVersion: Int64 = 0
        var receivedOnBind: Int64 = 0
        var outbox: [ServerMessage] = []
        var violations: [String] = []

        func download(_ entries: [DownloadChangeset]) -> ServerMessage {
            .download(Download(session: 1, epoch: ClientSessionModelTests.epoch, changesets: entries,
                               progress: DownloadProgress(serverVersion: entries.last?.serverVersion ?? Int64(history.count),
                                                          latestServerVersion: Int64(history.count), downloadableBytes: 0)))
        }

        mutating func receive(_ message: ClientMessage) {
            if bind == .endedByServer {
                // The server ended the session (its token expired): what the client sent before
                // it heard is dropped, until it binds again.
                switch message {
                case .bind: break
                case .unbind: outbox.append(.unbound(Unbound(session: 1, epoch: ClientSessionModelTests.epoch))); return
                default: return
                }
            }
            switch message {
            case .bind:
                if bind == .bound || bind == .identified { violations.append("bind while \(bind)") }
                bind = .bound
                receivedOnBind = 0
            case .ident(let ident):
                guard bind == .bound else { return violations.append("ident while \(bind)") }
                bind = .identified
                outbox.append(.identAnswer(IdentAnswer(session: 1, epoch: ClientSessionModelTests.epoch, fileIdent: ClientSessionModelTests.file,
                                                       latestServerVersion: Int64(history.count))))
                let missed = Array(history.dropFirst(Int(ident.lastServerVersion)))
                if !missed.isEmpty { outbox.append(download(missed)) }
            case .upload(let upload):
                guard bind == .identified else { return violations.append("upload while \(bind)") }
                var integrated: [DownloadChangeset] = []
                for c in upload.changesets {
                    let version = c.clientVersion
                    if version <= receivedOnBind { violations.append("client version \(version) uploaded twice on one bind") }
                    receivedOnBind = max(receivedOnBind, version)
                    guard version > integratedClientVersion else { continue }  // a new bind sends it again: skipped
                    if version != integratedClientVersion + 1 {
                        violations.append("client version \(version) after \(integratedClientVersion): versions were lost")
                    }
                    let entry = DownloadChangeset(serverVersion: Int64(history.count + 1), originFileIdent: ClientSessionModelTests.file.ident,
                                                  originTimestamp: c.changeset.timestamp, lastClientVersion: integratedClientVersion,
                                                  changeset: c.changeset)
                    integratedClientVersion = version
                    history.append(entry)
                    integrated.append(entry)
                }
                outbox.append(.uploadAck(UploadAck(session: 1, epoch: ClientSessionModelTests.epoch, clientVersion: integratedClientVersion,
                                                   serverVersion: Int64(history.count))))
                if !integrated.isEmpty { outbox.append(download(integrated)) }
            case .mark(let mark):
                guard bind == .identified else { return violations.append("mark while \(bind)") }
                outbox.append(.markAnswer(MarkAnswer(session: 1, epoch: ClientSessionModelTests.epoch, requestID: mark.requestID,
                                                     serverVersion: Int64(history.count))))
            case .unbind:
                bind = .none
                outbox.append(.unbound(Unbound(session: 1, epoch: ClientSessionModelTests.epoch)))
            case .hello, .queryChange, .refreshAccessToken, .ping, .heldObjects:
                break
            }
        }

        /// Another device's change reaches the server.
        mutating func otherDeviceWrote() {
            let serverVersion = Int64(history.count + 1)
            let id = ObjectID(type: "Dog", primaryKey: .int(1_000_000 + serverVersion))
            let changeset = Changeset(version: serverVersion, timestamp: 1_700_000_000_000 + serverVersion, fileIdent: 3,
                                      instructions: [.createObject(id), .set(id, path: [.property("name")], value: .string("other \(serverVersion)"))])
            let entry = DownloadChangeset(serverVersion: serverVersion, originFileIdent: 3, originTimestamp: changeset.timestamp,
                                          lastClientVersion: integratedClientVersion, changeset: changeset)
            history.append(entry)
            if bind == .identified { outbox.append(download([entry])) }
        }
    }

    /// The shell around the machine, as SessionEngine carries actions out, plus the connection.
    struct World {
        var session: ClientSession
        var server = Server()
        var connectionOpen = false
        var wantsConnection = false
        var toServer: [ClientMessage] = []
        var toClient: [ServerMessage] = []
        var timers: [ClientSession.Timer: UInt64] = [:]
        var tokenRequested = false
        /// The next download's write transaction fails (nothing of it is kept).
        var failNextWrite = false
        /// `SyncSession.suspend()`/`resume()` record the request at once; the machine takes
        /// the queued commands later, in order.
        var suspensionRequested = false
        var commands: [Bool] = []
        var committed: Int64 = 0
        var uploadWaits: [ClientSession.WaitID] = []
        var completedWaits: Set<ClientSession.WaitID> = []
        var violations: [String] = []
        /// A broken shell, to show that the model catches what it is meant to.
        var mutation: Mutation?

        init() {
            session = ClientSession(id: 1, target: .partition(.string("model")), accessToken: "t0",
                                    saved: ClientSyncState(fileIdent: ClientSessionModelTests.file, serverVersion: 0, epoch: ClientSessionModelTests.epoch),
                                    configuration: .init(backoff: ReconnectBackoff(seed: 1)))
        }

        mutating func perform(_ actions: [ClientSession.Action]) {
            var withholding = false
            for action in actions {
                switch action {
                case .requestConnection:
                    wantsConnection = true
                case .send(let message):
                    if case .upload(let upload) = message, withholding || suspensionRequested, mutation != .sendsWhileSuspensionRequested {
                        withholding = true
                        if let first = upload.changesets.first { session.withheld(uploadFrom: first.clientVersion, querySet: false) }
                        continue
                    }
                    if case .upload = message, suspensionRequested {
                        violations.append("upload sent after the app suspended the session")
                    }
                    switch message {
                    case .bind, .ident, .upload:
                        if session.isSuspended { violations.append("\(message.kindName) sent while the app keeps the session suspended") }
                    default: break
                    }
                    guard connectionOpen else {
                        violations.append("\(message.kindName) sent on a closed connection")
                        continue
                    }
                    toServer.append(message)
                case .scheduleTimer(let timer, let generation, _):
                    timers[timer] = generation
                case .cancelTimer(let timer):
                    timers[timer] = nil
                case .integrate(let batch):
                    // Written at once: the connection hands the engine its next message only
                    // once this one was carried out.
                    writeDownload(batch)
                case .refreshAccessToken:
                    tokenRequested = true
                case .completeWait(let wait):
                    if !completedWaits.insert(wait).inserted { violations.append("wait completed twice") }
                case .failWait(let wait, let error):
                    violations.append("wait \(wait) failed: \(error)")
                case .requestClientReset(let request):
                    violations.append("client reset requested: \(request.message)")
                case .reportError(let error):
                    if error.isFatal { violations.append("fatal error: \(error)") }
                case .persistIdentity, .uploadAcknowledged, .resetConfirmed, .reportProgress, .querySetRejected:
                    break
                }
            }
        }

        /// Writes a download, or fails to (the transaction failed: nothing of it is kept).
        mutating func writeDownload(_ batch: ClientSession.DownloadBatch) {
            if failNextWrite {
                failNextWrite = false
                perform(session.downloadNotApplied())
                return
            }
            var copy = session
            _ = copy.integrate(batch, raced: [])
            session = copy
            perform(session.downloadApplied())
        }

        mutating func commit() {
            committed += 1
            let id = ObjectID(type: "Dog", primaryKey: .int(committed))
            perform(session.localChangesetCommitted(Changeset(
                version: committed, timestamp: 1_600_000_000_000 + committed, fileIdent: ClientSessionModelTests.file.ident,
                instructions: [.createObject(id), .set(id, path: [.property("name")], value: .string("mine \(committed)"))])))
        }

        mutating func flushServer() {
            if connectionOpen { toClient += server.outbox }
            server.outbox = []
        }

        mutating func closeConnection() {
            connectionOpen = false
            toServer = []
            toClient = []
            if server.bind != .none { server.bind = .none }
            perform(session.connectionClosed(error: "the connection dropped"))
        }

        mutating func openConnection() {
            wantsConnection = false
            connectionOpen = true
            perform(session.connectionOpened())
        }

        mutating func takeCommand() {
            let suspend = commands.removeFirst()
            if !suspend, mutation == .resumesWithStart {
                perform(session.start(connectionIsOpen: connectionOpen))
            } else {
                perform(suspend ? session.suspend() : session.resume(connectionIsOpen: connectionOpen))
            }
        }

        mutating func checkInvariants() {
            if session.isSuspended && session.status.isActive { violations.append("reported active while suspended") }
            if session.state == .active && session.isSuspended { violations.append("active while suspended") }
            violations += server.violations
            server.violations = []
        }
    }

    enum Mutation {
        /// Sends the uploads the machine decided on before it took the app's suspension.
        case sendsWhileSuspensionRequested
        /// Resumes with `start` (as a shell keeping its own suspension flag would).
        case resumesWithStart
    }

    enum Event: CaseIterable {
        case commit, deliverToServer, deliverToClient, failNextWrite, suspend, resume, takeCommand, drop, open, timer,
             tokenExpires, tokenArrives, otherDevice, waitForUpload
        var weight: Int {
            switch self {
            case .commit, .deliverToServer, .deliverToClient: 20
            case .open, .takeCommand: 6
            case .timer: 5
            case .otherDevice, .tokenArrives: 4
            case .suspend, .resume: 3
            case .drop, .tokenExpires, .waitForUpload, .failNextWrite: 2
            }
        }
    }

    /// Runs one sequence; returns what went wrong (empty when nothing did) and the events.
    static func run(seed: UInt64, steps: Int, mutation: Mutation? = nil) -> (violations: [String], trace: [String]) {
        var rng = SplitMix64(seed: seed)
        var world = World()
        world.mutation = mutation
        var trace: [String] = []
        let weighted = Event.allCases.flatMap { Array(repeating: $0, count: $0.weight) }
        world.perform(world.session.start(connectionIsOpen: false))
        for _ in 0..<steps {
            let event = weighted.randomElement(using: &rng)!
            trace.append("\(event)")
            switch event {
            case .commit:
                world.commit()
            case .deliverToServer:
                guard !world.toServer.isEmpty else { continue }
                world.server.receive(world.toServer.removeFirst())
                world.flushServer()
            case .deliverToClient:
                guard !world.toClient.isEmpty else { continue }
                world.perform(world.session.received(world.toClient.removeFirst()))
            case .suspend:
                world.suspensionRequested = true
                world.commands.append(true)
            case .resume:
                world.suspensionRequested = false
                world.commands.append(false)
            case .failNextWrite:
                world.failNextWrite = true
            case .takeCommand:
                guard !world.commands.isEmpty else { continue }
                world.takeCommand()
            case .drop:
                guard world.connectionOpen else { continue }
                world.closeConnection()
            case .open:
                guard world.wantsConnection else { continue }
                world.openConnection()
            case .timer:
                guard let (timer, generation) = world.timers.randomElement(using: &rng) else { continue }
                world.timers[timer] = nil
                world.perform(world.session.timerFired(timer, generation: generation))
            case .tokenExpires:
                guard world.connectionOpen, world.server.bind == .identified || world.server.bind == .bound else { continue }
                world.server.bind = .endedByServer
                world.toClient.append(.error(ErrorMessage(code: .accessTokenExpired, message: "expired", action: .refreshAccessToken,
                                                          session: 1, epoch: epoch)))
            case .tokenArrives:
                guard world.tokenRequested else { continue }
                world.tokenRequested = false
                if Int.random(in: 0..<4, using: &rng) == 0 {
                    world.perform(world.session.accessTokenRefreshFailed())
                } else {
                    world.perform(world.session.accessTokenRefreshed("t\(trace.count)"))
                }
            case .otherDevice:
                world.server.otherDeviceWrote()
                world.flushServer()
            case .waitForUpload:
                let (wait, actions) = world.session.wait(for: .upload)
                world.uploadWaits.append(wait)
                world.perform(actions)
            }
            world.checkInvariants()
            if !world.violations.isEmpty { return (world.violations, trace) }
        }

        // Settle: the app resumes; the network delivers everything, timers fire, tokens arrive.
        world.suspensionRequested = false
        world.failNextWrite = false
        world.commands.append(false)
        while !world.commands.isEmpty { world.takeCommand() }
        var idle = 0
        for _ in 0..<20_000 where idle < 2 {
            if world.wantsConnection && !world.connectionOpen {
                world.openConnection()
            } else if world.wantsConnection {
                world.openConnection()
            } else if !world.toServer.isEmpty {
                world.server.receive(world.toServer.removeFirst())
                world.flushServer()
            } else if !world.toClient.isEmpty {
                world.perform(world.session.received(world.toClient.removeFirst()))
            } else if world.tokenRequested {
                world.tokenRequested = false
                world.perform(world.session.accessTokenRefreshed("settled"))
            } else if let (timer, generation) = world.timers.first {
                world.timers[timer] = nil
                world.perform(world.session.timerFired(timer, generation: generation))
            } else {
                idle += 1
                continue
            }
            idle = 0
            world.checkInvariants()
            if !world.violations.isEmpty { return (world.violations, trace + ["settling"]) }
        }
        var end: [String] = []
        if world.server.integratedClientVersion != world.committed {
            end.append("the server integrated up to client version \(world.server.integratedClientVersion) of \(world.committed) (state \(world.session.state))")
        }
        if ProcessInfo.processInfo.environment["ATOLL_MODEL_DEBUG"] != nil {
            print("DEBUG state \(world.session.state) ack \(world.session.acknowledgedClientVersion) queued \(world.session.queuedClientVersion) uploadedOnBind \(world.session.uploadedOnBind) server \(world.server.integratedClientVersion) bind \(world.server.bind) history \(world.server.history.count) checkpoint \(world.session.checkpoint) pending \(world.session.merger.pending.map(\.version))")
        }
        if world.session.acknowledgedClientVersion != world.committed {
            end.append("acknowledged \(world.session.acknowledgedClientVersion) of \(world.committed)")
        }
        if !world.session.unacknowledged.isEmpty { end.append("\(world.session.unacknowledged.count) changesets left unacknowledged") }
        let open = world.uploadWaits.filter { !world.completedWaits.contains($0) }
        if !open.isEmpty { end.append("\(open.count) upload waits never completed") }
        if world.session.state != .active { end.append("settled in state \(world.session.state), not active") }
        return (end, trace)
    }

    @Test func randomSequencesKeepEveryCommitUploadedOnceAndNothingUploadedWhileSuspended() {
        runModelSequences("ClientSessionModelTests") { Self.run(seed: $0, steps: 150) }
    }

    /// The model catches what it is meant to: each broken shell fails some sequences.
    @Test(arguments: [Mutation.sendsWhileSuspensionRequested, .resumesWithStart])
    func theModelCatchesABrokenShell(_ mutation: Mutation) {
        let caught = (UInt64(0)..<300).first { !Self.run(seed: $0, steps: 150, mutation: mutation).violations.isEmpty }
        #expect(caught != nil)
    }
}
