import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// What one client may cost the sync endpoint (issue 10 §2): connections per address and per
/// user, sessions per connection, nothing decoded before a session is bound, bounded queues.
@Suite struct SyncLimitsTests {
    @Test func connectionsPastTheLimitOfAnAddressAreRefused() async throws {
        let configuration = TestServer.configuration { $0.limits.connectionsPerAddress = 5 }
        try await withServer(configuration) { server in
            var open: [SyncTestClient] = []
            for _ in 0..<5 {
                let client = try await SyncTestClient.connect(to: server)
                #expect(try await client.hello().serverHello != nil)
                open.append(client)
            }
            // A flood of 40 more: every one refused before the upgrade (HTTP 429), nothing read.
            var refused = 0
            for _ in 0..<40 {
                do {
                    let client = try await SyncTestClient.connect(to: server)
                    Issue.record("a connection past the limit was upgraded")
                    await client.close()
                } catch {
                    refused += 1
                }
            }
            #expect(refused == 40)
            let metrics = try await server.http.send("GET", "/metrics").text
            #expect(metrics.contains("atoll_limit_refusals_total{limit=\"connectionsPerAddress\"} 40"))
            // Closing one makes room for one.
            await open.removeFirst().close()
            var admitted = false
            for _ in 0..<50 where !admitted {  // the close reaches the server shortly
                guard let client = try? await SyncTestClient.connect(to: server) else {
                    try await Task.sleep(for: .milliseconds(20))
                    continue
                }
                client.send(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: "t")))
                if case .message(let message) = try await client.nextIncoming(timeout: .seconds(60)), message.serverHello != nil {
                    admitted = true
                    open.append(client)
                } else {
                    await client.close()
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(admitted)
            for client in open { await client.close() }
        }
    }

    @Test func sessionsPastTheLimitOfAConnectionAreRefused() async throws {
        let configuration = TestServer.configuration { $0.limits.sessionsPerConnection = 2 }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let first = try await client.bind(1, partition: .string("a"), token: token); #expect(first.identAnswer != nil, "\(first)")
            #expect(try await client.bind(2, partition: .string("b"), token: token).identAnswer != nil)
            let third = try #require(try await client.bind(3, partition: .string("c"), token: token).errorMessage)
            #expect(third.code == .tryAgainLater)
            #expect(third.session == 3)
            #expect(third.message.contains("too many sessions"))
            client.send(.mark(Mark(session: 1, requestID: 9)))
            #expect(try await client.next { $0.markAnswer }.requestID == 9, "the other sessions go on")
            await client.close()
        }
    }

    @Test func connectionsPastTheLimitOfAUserAreRefused() async throws {
        let configuration = TestServer.configuration { $0.limits.connectionsPerUser = 2 }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            var clients: [SyncTestClient] = []
            for i in 0..<3 {
                let client = try await SyncTestClient.connect(to: server)
                _ = try await client.hello()
                let answer = try await client.bind(1, partition: .string("home"), token: token)
                if i < 2 { #expect(answer.identAnswer != nil) } else { #expect(answer.errorMessage?.message.contains("too many sync connections of user") == true) }
                clients.append(client)
            }
            // Another user is not affected.
            let other = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            #expect(try await client.bind(1, partition: .string("home"), token: other).identAnswer != nil)
            for client in clients + [client] { await client.close() }
        }
    }

    @Test func clientFilesPastTheLimitOfAUserAreRefused() async throws {
        let configuration = TestServer.configuration { $0.limits.clientFilesPerUser = 2 }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            #expect(try await client.bind(1, partition: .string("a"), token: token).identAnswer != nil)
            #expect(try await client.bind(2, partition: .string("b"), token: token).identAnswer != nil)
            let third = try #require(try await client.bind(3, partition: .string("c"), token: token).errorMessage)
            #expect(third.code == .tryAgainLater)
            #expect(third.message.contains("client files"), "\(third.message)")
            // Another user registers its own.
            let other = try await SyncFixtures.accessToken(server)
            #expect(try await client.bind(4, partition: .string("c"), token: other).identAnswer != nil)
            await client.close()
        }
    }

    /// An upload (or any message but the few that set up a session) before a bind is refused
    /// without being decoded, and an oversized message before a bind is refused from its header.
    @Test func nothingButSessionSetUpIsReadBeforeABind() async throws {
        try await withServer { server in
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            // Not even a valid upload: its body is never looked at.
            client.sendMessageBytes([0x04] + [UInt8](repeating: 0xFF, count: 1_000))
            let error = try #require(try await client.next().errorMessage)
            #expect(error.code == .messageOutOfOrder)
            #expect(error.message.contains("no session is bound"))
            await client.close()

            let big = try await SyncTestClient.connect(to: server)
            _ = try await big.hello()
            big.send(.hello(ClientHello(versions: ProtocolVersion.supported, userAgent: String(repeating: "x", count: 100_000))))
            let tooBig = try #require(try await big.next().errorMessage)
            #expect(tooBig.code == .badFrame)
            await big.close()
        }
    }

    @Test func theInboundGateHoldsTheReaderPastItsBudget() async throws {
        let gate = InboundGate(budget: 100)
        await gate.enter(60)
        await gate.enter(60)  // under the budget when it arrived
        let entered = Recorder()
        let third = Task {
            await gate.enter(10)
            await entered.mark()
        }
        // Bounded poll: it must not get in while 120 bytes are queued…
        for _ in 0..<20 { await Task.yield() }
        #expect(await entered.count == 0)
        gate.leave(60)
        await third.value
        #expect(await entered.count == 1)
        #expect(gate.queuedBytes == 70)
        // …and a closed gate lets everyone through.
        let closed = InboundGate(budget: 1)
        await closed.enter(5)
        closed.close()
        await closed.enter(5)
    }

    /// A client that stops reading fills its socket, and the server's next write to it waits for
    /// good: past `writeTimeoutSeconds` (on the server's clock) the connection is closed, the other
    /// client carries on, and the stalled one resumes from its last version on a new connection.
    @Test(.timeLimit(.minutes(2))) func aClientThatStopsReadingIsDisconnectedAndResumesLater() async throws {
        let clock = ManualClock()
        let configuration = TestServer.configuration { $0.limits.writeTimeoutSeconds = 30 }
        try await withServer(configuration, clock: clock) { server in
            let token = try await SyncFixtures.accessToken(server)
            let stalled = try await SyncTestClient.connect(to: server)
            _ = try await stalled.hello()
            let ident = try #require(try await stalled.bind(1, partition: .string("home"), token: token).identAnswer)
            await stalled.stopReading()

            let writer = try await SyncTestClient.connect(to: server)
            _ = try await writer.hello()
            _ = try #require(try await writer.bind(1, partition: .string("home"), token: token).identAnswer)
            // Downloads for the stalled client, 256 KiB each, until its socket buffers are full and
            // a write to it has waited past the timeout (the clock moves 10 s per upload). The
            // writer is never held up meanwhile.
            let big = String(repeating: "x", count: 1 << 18)
            let refused = "atoll_limit_refusals_total{limit=\"writeTimeoutSeconds\"} 1"
            var version: Int64 = 0
            while version < 400, !server.running.metrics.exposition().contains(refused) {
                let n = version + 1
                let changeset = n == 1
                    ? SyncFixtures.createTask("t", title: big, version: 1)
                    : SyncFixtures.changeset(n, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string(big + "\(n)"))])
                writer.send(.upload(Upload(session: 1, changesets: [UploadChangeset(changeset, lastServerVersion: version)])))
                version = try await writer.next { $0.uploadAck }.serverVersion
                #expect(version == n)
                clock.advance(by: 10)
            }
            // The last uploads may still be on their way to the stalled client's socket.
            let closed = await waitUntil(timeout: .seconds(60)) {
                clock.advance(by: 10)
                return server.running.metrics.exposition().contains(refused)
            }
            #expect(closed, "no connection was closed for a stalled write")
            // Closing its socket failed the pending write: the connection ends and its session leaves.
            var left = false
            let deadline = ContinuousClock.now + .seconds(60)
            while !left, ContinuousClock.now < deadline {
                left = await server.running.coordinator.sessions(appID: "tasks").count == 1
                if !left { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(left, "the stalled session left")

            // Back on a new connection, it resumes from what it had and gets everything.
            let back = try await SyncTestClient.connect(to: server)
            _ = try await back.hello()
            let again = try #require(try await back.bind(
                1, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 0, epoch: ident.epoch).identAnswer)
            #expect(again.latestServerVersion == version)
            #expect(try await back.downloads(1, through: version).count == Int(version))
            await back.close()
            await writer.close()
            await stalled.resumeReading()
            await stalled.close()
        }
    }

    @Test func theOutboundBacklogOverflowsOnceAndStaysOverflowed() {
        let backlog = OutboundBacklog(limit: 3)
        #expect((0..<3).allSatisfy { _ in backlog.admit() })
        #expect(!backlog.admit())
        #expect(backlog.hasOverflowed)
        backlog.handled()
        #expect(!backlog.admit(), "a client that fell behind is disconnected, not fed again")
    }

    actor Recorder {
        var count = 0
        func mark() { count += 1 }
    }
}

/// The coordinator keeps the state of at most `cachedRealms` realms; an evicted realm is rebuilt
/// from the store when used again.
@Suite struct RealmCacheTests {
    @Test func cachedRealmStatesAreBoundedAndRebuiltWhenNeeded() async throws {
        let configuration = TestServer.configuration { $0.limits.cachedRealms = 3 }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            for i in 0..<10 {
                let session = SessionID(UInt64(i + 1))
                _ = try #require(try await client.bind(session, partition: .string("p\(i)"), token: token).identAnswer)
                client.send(.upload(Upload(session: session, changesets: [
                    UploadChangeset(SyncFixtures.createTask("t\(i)", title: "task \(i)"), lastServerVersion: 0),
                ])))
                #expect(try await client.next { $0.uploadAck }.session == session)
                client.send(.unbind(session))
                _ = try await client.next { $0.unbound }
            }
            let coordinator = server.running.coordinator
            #expect(await coordinator.recency.count <= 3)
            #expect(await coordinator.materialized.count <= 3)
            // The first realm was evicted: a change to its object is still checked and integrated.
            _ = try #require(try await client.bind(100, partition: .string("p0"), token: token, file: .unassigned).identAnswer)
            client.send(.upload(Upload(session: 100, changesets: [UploadChangeset(SyncFixtures.changeset(1, [
                .set(SyncFixtures.task("t0"), path: [.property("title")], value: .string("again")),
            ]), lastServerVersion: 1)])))
            let ack = try await client.next { message -> UploadAck? in message.uploadAck?.session == 100 ? message.uploadAck : nil }
            #expect(ack.serverVersion == 2)
            await client.close()
        }
    }
}
