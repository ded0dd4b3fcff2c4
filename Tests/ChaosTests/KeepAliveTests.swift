@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The sync connection's keep-alive (`SyncTimeoutOptions`' ping period and pong timeout) on the
/// clock of the app: a connection that stopped carrying data is dropped and opened again, and a
/// message lost on a connection that still carries data shows at the next ping.
@MainActor @Suite(.serialized) struct KeepAliveTests {
    static let timeouts = SyncTimeoutOptions(connectTimeout: 5_000, pingKeepalivePeriod: 10_000, pongKeepaliveTimeout: 20_000)

    /// A device behind `proxy`, on the server's clock, with ``timeouts``.
    private func open(_ server: SyncTestServer, _ proxy: FaultProxy, _ device: String) async throws -> (Realm, SyncSession) {
        var configuration = server.appConfiguration(device: device)
        configuration.baseURL = proxy.baseURL
        configuration.syncTimeouts = Self.timeouts
        let app = App(id: server.appId, configuration: configuration, clock: server.clock.wall)
        let user = try await app.login(credentials: .anonymous)
        var realmConfiguration = user.configuration(partitionValue: device)
        realmConfiguration.objectTypes = [ChaosItem.self]
        let realm = try await Realm(configuration: realmConfiguration, downloadBeforeOpen: .never)
        let session = try #require(realm.syncSession)
        try await bounded(.seconds(30), "first upload") { try await session.wait(for: .upload) }
        return (realm, session)
    }

    /// Waits for an upload while moving the clock `step` seconds at a time (at most `steps` times).
    private func uploadWhileMovingTheClock(_ session: SyncSession, _ clock: ManualClock, step: TimeInterval, steps: Int) async -> Bool {
        let done = Recorder<Bool>()
        let wait = Task { @MainActor in
            let ok = (try? await bounded(.seconds(60), "upload") { try await session.wait(for: .upload) }) != nil
            done.append(ok)
        }
        defer { wait.cancel() }
        for _ in 0..<steps where done.all.isEmpty {
            clock.advance(by: step)
            try? await Task.sleep(for: .milliseconds(100))
        }
        _ = await waitUntil(timeout: .seconds(60)) { !done.all.isEmpty }
        return done.all == [true]
    }

    /// The network stops carrying anything while the socket stays open (a NAT that forgot the
    /// flow, a peer that froze): no pong comes, the connection is dropped after the pong timeout
    /// and the next one carries the write.
    @Test(.timeLimit(.minutes(2))) func aConnectionThatCarriesNothingIsDroppedWhenNoPongComes() async throws {
        try await withSyncTestServer { server in
            let proxy = try await FaultProxy.start(upstream: "127.0.0.1", server.port)
            let (realm, session) = try await open(server, proxy, "black-hole")
            let connectionsBefore = proxy.statistics.webSocketConnections
            await proxy.blackHoleOpenConnections()
            try realm.write { realm.add(ChaosItem(value: ["origin": "behind a black hole"])) }
            let swallowed = await waitUntil(timeout: .seconds(10)) { proxy.statistics.framesDropped > 0 }
            #expect(swallowed)
            #expect(await uploadWhileMovingTheClock(session, server.clock, step: 5, steps: 200), "the upload never completed")
            #expect(proxy.statistics.webSocketConnections > connectionsBefore, "no new connection was opened")
            try await proxy.stop()
        }
    }

    /// An upload lost on a connection that goes on carrying data (which TCP never does, but a
    /// faulty middlebox might): the next ping reveals the gap in the message ids, the server
    /// closes the connection, and the upload goes out again on the next one.
    @Test(.timeLimit(.minutes(2))) func anUploadLostOnALiveConnectionGoesOutAgainAfterTheNextPing() async throws {
        try await withSyncTestServer { server in
            let proxy = try await FaultProxy.start(upstream: "127.0.0.1", server.port)
            let (realm, session) = try await open(server, proxy, "lost-upload")
            let connectionsBefore = proxy.statistics.webSocketConnections
            proxy.set(.init(drop: .discard), for: .clientToServer)
            try realm.write { realm.add(ChaosItem(value: ["origin": "lost on the way"])) }
            let swallowed = await waitUntil(timeout: .seconds(10)) { proxy.statistics.framesDropped > 0 }
            #expect(swallowed)
            proxy.set(.none, for: .clientToServer)  // not healAll(): that would close the connection
            #expect(await uploadWhileMovingTheClock(session, server.clock, step: 5, steps: 200), "the upload never completed")
            #expect(proxy.statistics.webSocketConnections > connectionsBefore, "no new connection was opened")
            try await proxy.stop()
        }
    }
}
