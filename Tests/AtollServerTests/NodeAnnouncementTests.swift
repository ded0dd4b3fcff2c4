import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// The nodes on one PostgreSQL database act only on announcements sealed by a node of the
/// deployment (issue 21 §3): any role that may connect to the database may `NOTIFY` on it.
@Suite(postgresInstalled) struct NodeAnnouncementTests {
    /// A raw `pg_notify` from another connection, with forged history (a changeset carried in the
    /// line), "sessions ended" and "terminate" lines, sealed or not: the client of the node sees
    /// none of it, its session goes on, and the node counts what it ignored.
    @Test(.timeLimit(.minutes(2))) func forgedNotificationsChangeNothingAClientSees() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        try await withServer(TestServer.configuration { $0.store = url }) { server in
            let login = try await server.http.anonymousLogin()
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("home"), token: login.access_token).identAnswer)
            client.send(.upload(Upload(session: 1, changesets: [
                UploadChangeset(SyncFixtures.createTask("real", title: "real"), lastServerVersion: 0)])))
            #expect(try await client.next { $0.uploadAck }.serverVersion == 1)
            _ = try await client.downloads(1, through: 1)

            let realmID = try #require(try await cluster.execute("SELECT id::text FROM realms", onDatabaseOf: url).first?[0])
            var forged = SyncFixtures.createTask("forged", title: "forged", version: 7)
            forged.fileIdent = ident.fileIdent.ident
            let history = "h\t\(realmID)\t2\t2:\(forged.encoded().base64EncodedString())"
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let lines = [history, "u\t\(login.user_id)\t\tforged", "t\ttasks", "a\ttasks", "r\t\(realmID)"].flatMap { line in
                ["forger\t\(now)\t\(line)",  // as a node sent them before announcements were sealed
                 "\(String(repeating: "A", count: 43))\tforger\t\(now)\t\(line)"]  // with a made-up MAC
            }
            for line in lines {
                try await cluster.execute("SELECT pg_notify('atoll_changes', '\(line.replacingOccurrences(of: "'", with: "''"))')",
                                          onDatabaseOf: url)
            }
            #expect(await waitUntil(timeout: .seconds(20)) { Self.rejected(server) >= lines.count },
                    "the node heard and ignored every forged line (\(Self.rejected(server)) of \(lines.count))")
            #expect(await client.staysQuiet(), "no forged download, no ended session")

            // The session goes on: the next real upload is integrated after the real history.
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(
                SyncFixtures.changeset(2, [.set(SyncFixtures.task("real"), path: [.property("title")], value: .string("still real"))]),
                lastServerVersion: 1)])))
            #expect(try await client.next { $0.uploadAck }.serverVersion == 2)
            await client.close()
        }
    }

    static func rejected(_ server: TestServer) -> Int {
        server.running.metrics.exposition().split(separator: "\n")
            .filter { $0.hasPrefix("atoll_store_notifications_rejected_total{") }
            .compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
    }
}

/// The seal of announcements as pure logic: a line opens under the key it was sealed with only,
/// and a line heard twice, or sent outside the window, is refused.
@Suite struct AnnouncementSealTests {
    let seal = AnnouncementSeal(tokenSecret: "token-secret-of-these-nodes-0123456789")

    @Test func aSealedLineOpensUnderItsKeyOnly() throws {
        let line = seal.seal("node\t1\tt\tapp")
        guard case .success(let opened) = seal.open(line) else { Issue.record("a sealed line does not open"); return }
        #expect(opened.body == "node\t1\tt\tapp")
        let other = AnnouncementSeal(tokenSecret: "another-deployments-secret-0123456789")
        #expect(throws: AnnouncementSeal.Rejection.forged) { try other.open(line).get() }
        #expect(throws: AnnouncementSeal.Rejection.forged) { try seal.open(line.replacingOccurrences(of: "app", with: "apq")).get() }
        #expect(throws: AnnouncementSeal.Rejection.unreadable) { try seal.open("no tab at all").get() }
    }

    @Test func aLineHeardTwiceOrOutsideTheWindowIsRefused() {
        var replays = AnnouncementReplayGuard()
        let now: Int64 = 1_700_000_000_000
        #expect(replays.admit(mac: "m1", sentAt: now - 10, now: now) == nil)
        #expect(replays.admit(mac: "m1", sentAt: now - 10, now: now + 5) == .replayed)
        #expect(replays.admit(mac: "m2", sentAt: now - AnnouncementSeal.window - 1, now: now) == .stale)
        #expect(replays.admit(mac: "m3", sentAt: now + AnnouncementSeal.window + 1, now: now) == .stale)
        // Past the window a MAC is forgotten (its line is refused as stale anyway).
        #expect(replays.admit(mac: "m4", sentAt: now + 2 * AnnouncementSeal.window, now: now + 2 * AnnouncementSeal.window) == nil)
    }
}
