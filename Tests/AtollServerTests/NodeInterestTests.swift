import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import Testing

/// A node reads only the announcements of realms it serves (issue 26 §2): others' history lines,
/// and its own, are dropped from their header, unread; a realm it starts serving later is caught
/// up from the store, and its announcements are read from then on.
@Suite(postgresInstalled) struct NodeInterestTests {
    /// Node B serves nothing while node A takes uploads: B drops every announcement of them
    /// unread (counted). A device that then binds the realm on B downloads all of it, and A's next
    /// write reaches it through the announcement, now read.
    @Test(.timeLimit(.minutes(2))) func aNodeReadsOnlyTheAnnouncementsOfRealmsItServes() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        try await withServer(TestServer.configuration { $0.store = url }) { a in
            try await withServer(TestServer.configuration { $0.store = url }) { b in
                let login = try await a.http.anonymousLogin()
                let writer = try await SyncTestClient.connect(to: a)
                _ = try await writer.hello()
                _ = try #require(try await writer.bind(1, partition: .string("home"), token: login.access_token).identAnswer)
                let uploads: Int64 = 5
                for version in 1...uploads {
                    writer.send(.upload(Upload(session: 1, changesets: [
                        UploadChangeset(SyncFixtures.createTask("t\(version)", title: "t\(version)", version: version),
                                        lastServerVersion: version - 1)])))
                    #expect(try await writer.next { $0.uploadAck }.serverVersion == version)
                }
                // Each node hears every line, its own included, on its own listening connection.
                #expect(await waitUntil(timeout: .seconds(20)) {
                    Self.heard(b, "skipped") >= Int(uploads) && Self.heard(a, "own") >= Int(uploads)
                }, "B dropped A's announcements unread (\(Self.heard(b, "skipped")) of \(uploads)), A its own (\(Self.heard(a, "own")))")
                #expect(Self.heard(b, "read") == 0, "B read none of them")
                #expect(Self.heard(a, "read") == 0)

                // B starts serving the realm after its announcements went by: the bind catches up.
                let reader = try await SyncTestClient.connect(to: b)
                _ = try await reader.hello()
                let readerLogin = try await b.http.anonymousLogin()
                _ = try #require(try await reader.bind(1, partition: .string("home"), token: readerLogin.access_token).identAnswer)
                let caughtUp = try await reader.downloads(1, through: uploads)
                #expect(caughtUp.map(\.serverVersion) == Array(1...uploads))

                // From now on B reads the realm's announcements: A's next write reaches B's device.
                writer.send(.upload(Upload(session: 1, changesets: [
                    UploadChangeset(SyncFixtures.createTask("late", title: "late", version: uploads + 1), lastServerVersion: uploads)])))
                #expect(try await writer.next { $0.uploadAck }.serverVersion == uploads + 1)
                let late = try await reader.downloads(1, through: uploads + 1, timeout: .seconds(30))
                #expect(late.last?.serverVersion == uploads + 1)
                #expect(Self.heard(b, "read") >= 1, "B read the announcement of a realm it serves")
                await reader.close()
                await writer.close()
            }
        }
    }

    /// The count of history announcements heard with `outcome`, from the node's `/metrics`.
    static func heard(_ server: TestServer, _ outcome: String) -> Int {
        let prefix = "atoll_store_history_announcements_total{outcome=\"\(outcome)\"}"
        return server.running.metrics.exposition().split(separator: "\n")
            .first { $0.hasPrefix(prefix) }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// The store's listener on its own: a store given a ``RealmInterest`` yields the history of the
/// realms it admits only, and none of its own lines.
@Suite(postgresInstalled) struct PostgresInterestTests {
    @Test(.timeLimit(.minutes(1))) func historyOfRealmsNotAdmittedIsDroppedUnread() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let one = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        let two = try await PostgresServerStore.open(url: url, maximumConnections: 4, logger: quietLogger)
        for store in [one, two] { store.authenticateAnnouncements(tokenSecret: PostgresStoreTests.nodesTokenSecret) }
        let interest = RealmInterest()
        var heard = try #require(two.changesFromOtherNodes(servedBy: interest)).makeAsyncIterator()
        #expect(await heard.next() == .missed)

        try await one.createApp(StoredApp(id: "app", createdAt: Date()))
        let realm = try await one.realm(appID: "app", path: "s:p", creatingWith: 1, now: Date())
        let file = try await one.newClientFile(realmID: realm.id, salt: 1, now: Date())
        for version: Int64 in 1...3 {
            _ = try await one.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: version - 1) { _ in
                [Changeset(version: version, timestamp: version, instructions: [])]
            }
        }
        _ = try await two.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: 3) { _ in
            [Changeset(version: 4, timestamp: 4, instructions: [])]
        }
        #expect(await waitUntil(timeout: .seconds(20)) { interest.heard.skipped == 3 && interest.heard.own == 1 },
                "\(interest.heard)")
        // Other changes still come through, after nothing of the realm (one announcer: in order).
        one.announcer.announce(one.notification(.appChanged(appID: "app")))
        #expect(await heard.next() == .appChanged(appID: "app"))

        interest.set(realm.id, served: true)
        _ = try await one.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: 4) { _ in
            [Changeset(version: 5, timestamp: 5, instructions: [])]
        }
        guard case .history(let realmID, let latest, _, _) = await heard.next() else {
            Issue.record("the history of an admitted realm did not come through")
            return
        }
        #expect(realmID == realm.id && latest == 5)
        #expect(interest.heard == RealmInterest.Counts(skipped: 3, own: 1, read: 1))
        await one.shutdown()
        await two.shutdown()
    }
}

/// The header of a change-channel line as the listener reads it before anything else.
@Suite struct AnnouncementHeaderTests {
    let mac = String(repeating: "M", count: 43)

    @Test func theNodeAndAHistoryLinesRealmAreReadFromTheFront() {
        let history = "node-1\t1700000000000\tH\t42\t7\t9\t9:AAAA"
        #expect(AnnouncementHeader(mac + "\t" + history, sealed: true)
                == AnnouncementHeader(node: "node-1", historyRealmID: 42))
        #expect(AnnouncementHeader(history, sealed: false) == AnnouncementHeader(node: "node-1", historyRealmID: 42))
        #expect(AnnouncementHeader("n\t1\th\t-3\t5", sealed: false) == AnnouncementHeader(node: "n", historyRealmID: -3))
        // Other kinds have no realm to filter on.
        #expect(AnnouncementHeader(mac + "\tn\t1\tr\t42", sealed: true) == AnnouncementHeader(node: "n", historyRealmID: nil))
        #expect(AnnouncementHeader(mac + "\tn\t1\tm", sealed: true) == AnnouncementHeader(node: "n", historyRealmID: nil))
        #expect(AnnouncementHeader(mac + "\tn\t1\tu\tuser\t\treason", sealed: true)
                == AnnouncementHeader(node: "n", historyRealmID: nil))
    }

    /// Lines of a bad shape have no header: they go on to the full check, which rejects them.
    @Test func aLineOfABadShapeHasNoHeader() {
        for line in ["", "\t", "no tabs", "\(mac)\tnode-only", "\(mac)\tn\t1\th", "\(mac)\tn\t1\tH\tnot-a-number\t1",
                     "\(mac)\tn\t1\tH\t99999999999999999999\t1", "\(mac)\tn\t1\tH\t\t1"] {
            #expect(AnnouncementHeader(line, sealed: true) == nil, "\(line)")
        }
    }
}
