import AtollCore
import AtollServer
import Foundation
import Testing

@Suite("Sync endpoint: hello, bind and ident")
struct SyncConnectionTests {
    @Test func helloAgreesOnTheHighestCommonVersion() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            let hello = try #require(try await client.hello(versions: 1...9).serverHello)
            #expect(hello.version == ProtocolVersion.current)
            #expect(hello.serverName == "atoll-server")
            client.send(.ping(Ping(timestamp: 42)))
            #expect(try await client.next().pong == Pong(timestamp: 42))
            await client.close()
        }
    }

    @Test func helloWithoutACommonVersionIsAnErrorAndTheConnectionCloses() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            let error = try #require(try await client.hello(versions: 7...9).errorMessage)
            #expect(error.code == .unsupportedProtocolVersion)
            #expect(error.action == .protocolViolation)
            #expect(error.session == nil)
            #expect(error.message.contains("7...9"))
            guard case .closed = try await client.nextIncoming() else { Issue.record("the connection stayed open"); return }
        }
    }

    @Test func anythingBeforeHelloIsOutOfOrder() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            client.send(.ping(Ping(timestamp: 1)))
            #expect(try await client.next().errorMessage?.code == .messageOutOfOrder)
            guard case .closed = try await client.nextIncoming() else { Issue.record("the connection stayed open"); return }
        }
    }

    @Test func bindAndIdentAssignAFileIdentAndTheRealmsEpoch() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let first = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            #expect(first.session == 1)
            #expect(first.fileIdent.isAssigned)
            #expect(first.fileIdent.salt != 0)
            #expect(first.epoch != .none)
            #expect(first.latestServerVersion == 0)

            let second = try #require(try await client.bind(2, partition: .string("home"), token: token).identAnswer)
            #expect(second.fileIdent.ident != first.fileIdent.ident)
            #expect(second.epoch == first.epoch)

            let other = try #require(try await client.bind(3, partition: .int(7), token: token).identAnswer)
            #expect(other.epoch != first.epoch, "each realm has its own epoch")

            client.send(.unbind(2))
            #expect(try await client.next().unbound == Unbound(session: 2, epoch: first.epoch))
            await client.close()
        }
    }

    @Test func aForgedTokenIsInvalidAndAsksForANewToken() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let error = try #require(try await client.bind(1, partition: .string("home"), token: "not.a.jwt").errorMessage)
            #expect(error.code == .invalidAccessToken)
            #expect(error.action == .refreshAccessToken)
            #expect(error.session == 1)
            // The ident sent with the bind is dropped quietly; the connection goes on.
            client.send(.ping(Ping(timestamp: 5)))
            #expect(try await client.next().pong?.timestamp == 5)
            // The same session id binds again with a good token.
            let token = try await SyncFixtures.accessToken(server)
            #expect(try await client.bind(1, partition: .string("home"), token: token).identAnswer != nil)
            await client.close()
        }
    }

    @Test func anExpiredTokenAsksForANewToken() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let expired = try await server.auth.accessTokens.issue(
                userID: login.user_id, appID: "tasks", now: Date().addingTimeInterval(-2 * server.auth.accessTokens.lifetime))
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let error = try #require(try await client.bind(1, partition: .string("home"), token: expired).errorMessage)
            #expect(error.code == .accessTokenExpired)
            #expect(error.action == .refreshAccessToken)
            await client.close()
        }
    }

    @Test func aDisabledUserIsLoggedOut() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            try await server.auth.setUserDisabled(login.user_id, disabled: true)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let error = try #require(try await client.bind(1, partition: .string("home"), token: login.access_token).errorMessage)
            #expect(error.code == .userLoggedOut)
            #expect(error.action == .logOut)
            await client.close()
        }
    }

    @Test func aTokenOfAnotherAppIsRefused() async throws {
        try await withServer { server in
            let otherAppToken = try await SyncFixtures.accessToken(server, app: "notes")
            let client = try await SyncTestClient.connect(to: server, app: "tasks")
            _ = try await client.hello()
            let error = try #require(try await client.bind(1, partition: .string("home"), token: otherAppToken).errorMessage)
            #expect(error.code == .invalidAccessToken)
            #expect(error.message.contains("notes"))
            await client.close()
        }
    }

    @Test func aFlexibleSessionCatchesUpOnlyWithItsQuerySetAndGetsTheMatchingObjects() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            client.send(.bind(Bind(session: 1, target: .flexible, accessToken: token)))
            client.send(.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
            client.send(.heldObjects(HeldObjects(session: 1, objects: [])))
            let answer = try #require(try await client.next().identAnswer)
            // The schema and two tasks, uploaded before any query set: no download yet.
            client.send(.upload(Upload(session: 1, changesets: [
                UploadChangeset(SyncFixtures.changeset(1, [
                    .addTable(SyncFixtures.taskSchema),
                    .createObject(SyncFixtures.task("a")), .set(SyncFixtures.task("a"), path: [.property("count")], value: .int(1)),
                    .createObject(SyncFixtures.task("b")), .set(SyncFixtures.task("b"), path: [.property("count")], value: .int(5)),
                ]), lastServerVersion: 0),
            ])))
            #expect(try await client.next().uploadAck != nil)
            client.send(.queryChange(QueryChange(session: 1, querySetVersion: 1, queries: [TypeQuery(objectType: "Task", query: "count > 2")])))
            let download = try #require(try await client.next().download)
            #expect(download.querySetVersion == 1)
            #expect(download.isLastInBatch)
            #expect(download.epoch == answer.epoch)
            // Its own changeset (the acknowledgement), then the view change: task a, which the
            // client created but the set does not match, leaves it; task b stays, sent whole.
            #expect(download.changesets.map(\.originFileIdent) == [answer.fileIdent.ident, FlexibleSync.viewChangeFileIdent])
            let view = download.changesets[1].changeset.instructions
            #expect(view.first == .eraseObject(SyncFixtures.task("a")))
            #expect(view.dropFirst().first == .createObject(SyncFixtures.task("b")))
            #expect(view.filter { $0.object == SyncFixtures.task("a") }.count == 1)
            // A query the server cannot run is refused with its version; the session goes on.
            client.send(.queryChange(QueryChange(session: 1, querySetVersion: 2, queries: [TypeQuery(objectType: "Task", query: "nope == 1")])))
            guard case .queryError(let refused) = try await client.next() else { Issue.record("no query error"); return }
            #expect(refused.querySetVersion == 2)
            #expect(refused.message.contains("nope"))
            client.send(.mark(Mark(session: 1, requestID: 7)))
            #expect(try await client.next().markAnswer?.requestID == 7)
            await client.close()
        }
    }

    @Test func anAppDeclaredForPartitionsRefusesFlexibleBinds() async throws {
        let configuration = TestServer.configuration { $0.apps = [.init(id: "tasks", syncKind: .partition)] }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            client.send(.bind(Bind(session: 1, target: .flexible, accessToken: token)))
            let error = try #require(try await client.next().errorMessage)
            #expect(error.code == .badSyncTarget)
            #expect(error.session == 1)
            #expect(error.message.contains("partition-based sync"))
            await client.close()
        }
    }

    @Test func uploadBeforeIdentIsASessionErrorAndTheConnectionStays() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            client.send(.bind(Bind(session: 1, target: .partition(.string("home")), accessToken: token)))
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("a", title: "A"), lastServerVersion: 0)])))
            let error = try #require(try await client.next().errorMessage)
            #expect(error.code == .messageOutOfOrder)
            #expect(error.session == 1)
            #expect(try await client.bind(2, partition: .string("home"), token: token).identAnswer != nil)
            await client.close()
        }
    }
}
