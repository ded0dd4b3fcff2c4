import AtollCore
import Testing

@Suite struct ProtocolServerLogicTests {
    @Test(arguments: [
        (offered: 1...3, supported: 2...5, chosen: UInt32(3)),
        (offered: 1...1, supported: 1...1, chosen: 1),
        (offered: 4...9, supported: 1...5, chosen: 5),
        (offered: 2...2, supported: 1...5, chosen: 2),
    ] as [(offered: ClosedRange<UInt32>, supported: ClosedRange<UInt32>, chosen: UInt32)])
    func versionNegotiationPicksTheHighestCommonVersion(_ c: (offered: ClosedRange<UInt32>, supported: ClosedRange<UInt32>, chosen: UInt32)) throws {
        #expect(try ProtocolVersion.negotiate(offered: c.offered, supported: c.supported) == c.chosen)
    }

    @Test func versionNegotiationWithoutOverlapIsATypedError() {
        #expect(throws: ProtocolError(.unsupportedProtocolVersion,
                                      "the client offers protocol versions 5...6, the server speaks 1...4")) {
            try ProtocolVersion.negotiate(offered: 5...6, supported: 1...4)
        }
        #expect(ServerErrorCode.unsupportedProtocolVersion.defaultAction == .protocolViolation)
    }

    /// Version 2 made dates exact (seconds since 2001, value tag 16): a version-1 client, which
    /// would read and write them through seconds since 1970, is refused with the typed error.
    @Test func aClientOfProtocolVersion1IsRefused() {
        #expect(ProtocolVersion.supported == 2...2)
        #expect(throws: ProtocolError(.unsupportedProtocolVersion,
                                      "the client offers protocol versions 1...1, the server speaks 2...2")) {
            var logic = ServerConnectionLogic()
            try logic.validate(.hello(ClientHello(versions: 1...1, userAgent: "Atoll 0.9")))
        }
        #expect(throws: ProtocolError(.unsupportedProtocolVersion,
                                      "the server chose protocol version 1, the client offered 2...2")) {
            try ProtocolVersion.accept(ServerHello(version: 1, serverName: "atoll-server 0.9"))
        }
    }

    static let hello = ClientMessage.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: "test"))
    static let bind = ClientMessage.bind(Bind(session: 1, target: .partition(.string("p")), accessToken: "t"))
    static let ident = ClientMessage.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none))

    static func upload(_ versions: Int64...) -> ClientMessage {
        .upload(Upload(session: 1, changesets: versions.map { UploadChangeset(ProtocolFixtures.changeset($0), lastServerVersion: 0) }))
    }

    func expectRefusal(_ messages: [ClientMessage], _ code: ServerErrorCode, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var logic = ServerConnectionLogic()
        do {
            for m in messages { try logic.validate(m) }
            Issue.record("accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test func aWellOrderedSessionIsAccepted() throws {
        var logic = ServerConnectionLogic()
        for m in [Self.hello, Self.bind, Self.ident, Self.upload(1, 2), .mark(Mark(session: 1, requestID: 1)), Self.upload(3),
                  .refreshAccessToken(RefreshAccessToken(session: 1, accessToken: "n")), .ping(Ping(timestamp: 1)), .unbind(1), Self.bind,
                  Self.ident, Self.upload(2, 3)]
        {
            try logic.validate(m)
        }
        #expect(logic.version == ProtocolVersion.current)
        #expect(logic.sessions[1]?.state == .identified)
        #expect(logic.sessions[1]?.lastClientVersion == 3)
    }

    @Test func helloComesFirstAndOnce() {
        expectRefusal([Self.bind], .messageOutOfOrder, "bind before hello")
        expectRefusal([Self.hello, Self.hello], .messageOutOfOrder, "second hello")
        expectRefusal([.hello(ClientHello(versions: 7...9, userAgent: ""))], .unsupportedProtocolVersion, "7...9")
    }

    @Test func sessionMessagesFollowBindThenIdent() {
        expectRefusal([Self.hello, Self.bind, Self.upload(1)], .messageOutOfOrder, "upload before ident")
        expectRefusal([Self.hello, Self.bind, .mark(Mark(session: 1, requestID: 1))], .messageOutOfOrder, "mark before ident")
        expectRefusal([Self.hello, Self.bind, Self.ident, Self.ident], .messageOutOfOrder, "second ident")
        expectRefusal([Self.hello, Self.ident], .unknownSession, "ident for session 1 that is not bound")
        expectRefusal([Self.hello, Self.bind, Self.bind], .sessionAlreadyBound, "already bound")
        expectRefusal([Self.hello, .unbind(4)], .unknownSession, "unbind of session 4")
    }

    @Test func clientVersionsIncreaseWithinAnUploadAndMayBeResent() throws {
        expectRefusal([Self.hello, Self.bind, Self.ident, Self.upload(3, 1)], .badClientVersion, "client version 1 after 3 in one upload")
        expectRefusal([Self.hello, Self.bind, Self.ident, Self.upload(2, 2)], .badClientVersion, "client version 2 after 2 in one upload")
        // Re-sending pending changesets (idempotent on the server) is not an order violation.
        var logic = ServerConnectionLogic()
        for m in [Self.hello, Self.bind, Self.ident, Self.upload(1, 2), Self.upload(1, 2, 3), Self.upload(2)] {
            try logic.validate(m)
        }
    }

    @Test func queryChangesAreForFlexibleSessionsWithIncreasingVersions() {
        let flexible = ClientMessage.bind(Bind(session: 1, target: .flexible, accessToken: "t"))
        let change = { (v: Int64) in ClientMessage.queryChange(QueryChange(session: 1, querySetVersion: v, queries: [])) }
        expectRefusal([Self.hello, Self.bind, Self.ident, change(1)], .messageOutOfOrder, "partition-sync")
        let held = ClientMessage.heldObjects(HeldObjects(session: 1, objects: []))
        expectRefusal([Self.hello, flexible, Self.ident, change(2)], .messageOutOfOrder, "query change before ident and held objects")
        expectRefusal([Self.hello, flexible, Self.ident, held, change(2), change(2)], .messageOutOfOrder, "query set version 2 after 2")
        expectRefusal([Self.hello, flexible, Self.ident, held, held], .messageOutOfOrder, "held objects not right after ident")
        expectRefusal([Self.hello, Self.bind, Self.ident, held], .messageOutOfOrder, "held objects on a partition-sync session")
        // The first query change of a session may repeat the version its ident names.
        var logic = ServerConnectionLogic()
        for m in [Self.hello, flexible, Self.ident, held, change(0), change(1)] { #expect(throws: Never.self) { try logic.validate(m) } }
    }

    @Test func refusalsNameTheirSessionAndBecomeErrorMessages() {
        var logic = ServerConnectionLogic()
        do {
            try logic.validate(Self.hello)
            try logic.validate(Self.bind)
            try logic.validate(Self.upload(1))
        } catch {
            #expect(error.session == 1)
            let message = ErrorMessage(error, epoch: 9)
            #expect(message.action == .protocolViolation && message.session == 1 && message.epoch == 9)
        }
    }

    @Test(arguments: ServerErrorCode.allCases)
    func everyServerCodeMapsToAnSDKCode(_ code: ServerErrorCode) {
        let mapped = SyncErrorCode(serverCode: code, action: code.defaultAction)
        let expected: SyncErrorCode = switch code {
        case .badQuery: .invalidFlexibleSyncSubscriptions
        case .compensatingWrite: .writeRejected
        case .permissionDenied: .permissionDeniedError
        case .badClientFileIdent, .badServerVersion, .clientResetRequired, .breakingSchemaChange: .clientResetError
        case .invalidAccessToken, .accessTokenExpired, .userLoggedOut: .clientUserError
        case .serverWarning, .syncDisabled: .serverWarning
        case .serverShuttingDown, .tryAgainLater: .connectionFailed
        default: .clientSessionError
        }
        #expect(mapped == expected)
        #expect(code.isConnectionLevel == (code.rawValue < 200))
    }
}

@Suite struct ProtocolConnectionTests {
    @Test func theClientChecksTheServersChoice() throws {
        #expect(try ProtocolVersion.accept(ServerHello(version: 2, serverName: "s"), offered: 1...3) == 2)
        #expect(throws: ProtocolError.self) { try ProtocolVersion.accept(ServerHello(version: 4, serverName: "s"), offered: 1...3) }
    }

    @Test func keepAlivePingsMeasuresAndTimesOut() {
        var k = ConnectionKeepAlive(intervalMilliseconds: 1000, timeoutMilliseconds: 500)
        #expect(k.tick(now: 0) == .sendPing(Ping(timestamp: 0)))
        #expect(k.tick(now: 100) == .idle)
        k.receivedPong(Pong(timestamp: 99), now: 120)  // not ours
        k.receivedPong(Pong(timestamp: 0), now: 120)
        #expect(k.roundTripMilliseconds == 120)
        #expect(k.nextDeadline == 1120)
        #expect(k.tick(now: 1000) == .idle)
        #expect(k.tick(now: 1120) == .sendPing(Ping(timestamp: 1120, lastRoundTripMilliseconds: 120)))
        #expect(k.tick(now: 1619) == .idle)
        #expect(k.tick(now: 1620) == .timedOut)
    }
}
