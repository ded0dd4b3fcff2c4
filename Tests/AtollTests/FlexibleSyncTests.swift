@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// The class of realm-core's flexible-sync client file (test_flx_metadata_tables_v1.realm).
final class TopLevel: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var queryable_str_field: String?
    @Persisted var queryable_int_field: Int?
    @Persisted var non_queryable_field: String?
    @Persisted var partition: String?
}

/// Flexible sync end to end: subscriptions choose what a device holds; the server sends exactly
/// the matching objects, bootstraps when the set changes and removes what leaves the view.
final class DatedTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var dueDate = Date()
}

@MainActor @Suite(.serialized) struct FlexibleSyncEndToEndTests {
    /// A flexible-sync file Realm wrote, as a synced configuration's seed: its subscription set
    /// (one `TRUEPREDICATE` on `TopLevel`) is the realm's, sent to the server and completed.
    /// A flexible-synced device's file as realm-swift left it (sync history, subscription set 1
    /// pending with two queries, ten tasks never uploaded): the subscriptions are the realm's, and
    /// the tasks they match reach the server.
    @Test func aFlexibleSyncedRealmFileKeepsItsSubscriptionsAndUploadsItsObjects() async throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AtollRealmFileTests/Fixtures/synced_flexible_v24.realm")
        try await withSyncTestServer { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            var configuration = frodo.flexibleSyncConfiguration()
            configuration.objectTypes = [SyncedTask.self]
            configuration.seedFilePath = seed
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            #expect(realm.subscriptions.count == 2)
            #expect(realm.subscriptions.first(named: "frodo")?.queryString == "owner == \"Frodo\"")
            #expect(realm.subscriptions.contains { $0.name == nil && $0.queryString == "done == true" })
            // The file's ten tasks are the realm's; the server may already have answered the upload
            // of the five outside the subscriptions with compensating deletions (the realm's thread
            // is the cooperative pool's, where the session integrates: it advances as soon as that
            // lands). The five the subscriptions match stay either way.
            let tasks = realm.objects(SyncedTask.self)
            #expect(tasks.count == 10 || tasks.count == 5, "\(tasks.count) tasks")
            #expect(tasks.where { $0.owner == "Frodo" || $0.done == true }.count == 5)
            try await realm.syncSession!.wait(for: .upload)
            // Another device subscribed to Frodo's tasks gets the five the file had.
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let other = try await open(sam)
            try await update(other) { subs in subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" }) }
            #expect(names(other) == (100...108).filter { $0 % 2 == 0 }.map { "synced task \($0)" })
        }
    }

    @Test func theSubscriptionsOfARealmWrittenFileAreRecreated() async throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AtollRealmFileTests/Fixtures/test_flx_metadata_tables_v1.realm")
        try await withSyncTestServer { server in
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            var configuration = user.flexibleSyncConfiguration()
            configuration.objectTypes = [TopLevel.self]
            configuration.schemaVersion = 1
            configuration.seedFilePath = seed
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            #expect(realm.subscriptions.count == 1)
            let subscription = try #require(realm.subscriptions.first)
            #expect(subscription.objectClassName == "TopLevel")
            #expect(subscription.queryString == "TRUEPREDICATE")
            let deadline = ContinuousClock.now + .seconds(30)
            while realm.subscriptions.state != .complete, ContinuousClock.now < deadline {
                try await _Concurrency.Task.sleep(for: .milliseconds(20))
                realm.refresh()
            }
            #expect(realm.subscriptions.state == .complete)
        }
    }

    private func open(_ user: User, _ behavior: Realm.OpenBehavior = .never) async throws -> Realm {
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [SyncedTask.self]
        return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
    }

    /// `realm.subscriptions.update`, the block editing that same set (as Realm requires).
    private func update(_ realm: Realm, _ block: (SyncSubscriptionSet) -> Void) async throws {
        let subscriptions = realm.subscriptions
        try await subscriptions.update { block(subscriptions) }
    }

    private func names(_ realm: Realm) -> [String] {
        realm.refresh()
        return realm.objects(SyncedTask.self).map(\.name).sorted()
    }

    /// Writes tasks on a device that subscribes to everything, and waits until they are uploaded.
    private func seed(_ server: SyncTestServer, _ tasks: [(String, String)]) async throws -> Realm {
        let writer = try await server.app(device: "writer").login(credentials: .anonymous)
        let realm = try await open(writer)
        try await update(realm) { subs in subs.append(QuerySubscription<SyncedTask>(name: "all")) }
        try realm.write {
            for (name, owner) in tasks { realm.add(SyncedTask(value: ["name": name, "owner": owner])) }
        }
        try await realm.syncSession!.wait(for: .upload)
        return realm
    }

    @Test func theServerSendsExactlyTheMatchingObjects() async throws {
        try await withSyncTestServer { server in
            _ = try await seed(server, [("Ring", "Frodo"), ("Pans", "Sam"), ("Map", "Frodo")])
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(frodo)
            #expect(realm.subscriptions.count == 0)
            #expect(names(realm).isEmpty)
            try await update(realm) { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            }
            #expect(realm.subscriptions.state == .complete)
            #expect(names(realm) == ["Map", "Ring"])
        }
    }

    @Test func updateHandsTheSetToItsBlock() async throws {
        try await withSyncTestServer { server in
            _ = try await seed(server, [("Ring", "Frodo")])
            let user = try await server.app(device: "reader").login(credentials: .anonymous)
            let realm = try await open(user)
            try await realm.subscriptions.update { $0.append(QuerySubscription<SyncedTask>(name: "all")) }
            #expect(names(realm) == ["Ring"])
        }
    }

    @Test func changingTheSubscriptionsBootstrapsAndRemovesWhatLeftTheView() async throws {
        try await withSyncTestServer { server in
            _ = try await seed(server, [("Ring", "Frodo"), ("Pans", "Sam"), ("Map", "Frodo")])
            let user = try await server.app(device: "reader").login(credentials: .anonymous)
            let realm = try await open(user)
            try await update(realm) { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "owner") { $0.owner == "Frodo" })
            }
            #expect(names(realm) == ["Map", "Ring"])
            try await update(realm) { subs in
                subs.remove(named: "owner")
                subs.append(QuerySubscription<SyncedTask>(name: "owner") { $0.owner == "Sam" })
            }
            #expect(names(realm) == ["Pans"])
            try await update(realm) { subs in subs.removeAll() }
            #expect(names(realm).isEmpty)
        }
    }

    @Test func anObjectChangedElsewhereEntersAndLeavesTheView() async throws {
        try await withSyncTestServer { server in
            let writer = try await seed(server, [("Ring", "Frodo"), ("Pans", "Sam")])
            let user = try await server.app(device: "reader").login(credentials: .anonymous)
            let realm = try await open(user)
            try await update(realm) { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            }
            #expect(names(realm) == ["Ring"])
            // The writer gives the ring to Sam and the pans to Frodo.
            try writer.write {
                for task in writer.objects(SyncedTask.self) { task.owner = task.owner == "Frodo" ? "Sam" : "Frodo" }
            }
            try await writer.syncSession!.wait(for: .upload)
            try await realm.syncSession!.wait(for: .download)
            #expect(names(realm) == ["Pans"])
            // A change to an object in the view arrives as an ordinary change.
            try writer.write { writer.objects(SyncedTask.self).where { $0.name == "Pans" }.first!.done = true }
            try await writer.syncSession!.wait(for: .upload)
            try await realm.syncSession!.wait(for: .download)
            realm.refresh()
            #expect(realm.objects(SyncedTask.self).first?.done == true)
        }
    }

    @Test func writesMadeOfflineInsideTheViewSurviveReconnecting() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(user)
            try await update(realm) { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            }
            realm.syncSession!.suspend()
            try realm.write { realm.add(SyncedTask(value: ["name": "Offline", "owner": "Frodo"])) }
            realm.syncSession!.resume()
            try await realm.syncSession!.wait(for: .upload)
            try await realm.syncSession!.wait(for: .download)
            #expect(names(realm) == ["Offline"])
            let other = try await server.app(device: "other").login(credentials: .anonymous)
            let otherRealm = try await open(other)
            try await update(otherRealm) { subs in subs.append(QuerySubscription<SyncedTask>(name: "all")) }
            #expect(names(otherRealm) == ["Offline"])
        }
    }

    @Test func aQueryOnAFieldThatIsNotQueryableFailsTheSubscriptionSet() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .flexible, queryableFields: ["owner"])]
        }) { server in
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(user)
            await #expect {
                try await update(realm) { subs in
                    subs.append(QuerySubscription<SyncedTask>(name: "bad") { $0.name == "Ring" })
                }
            } throws: { error in
                "\(error)".contains("'name' is not a queryable field")
            }
            guard case .error = realm.subscriptions.state else {
                Issue.record("state \(realm.subscriptions.state)")
                return
            }
            // A later valid set completes.
            try await update(realm) { subs in
                subs.removeAll()
                subs.append(QuerySubscription<SyncedTask>(name: "good") { $0.owner == "Frodo" })
            }
            #expect(realm.subscriptions.state == .complete)
        }
    }

    @Test func readPermissionsIsolateUsers() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .flexible,
                                        permissions: [.init(type: "SyncedTask", read: "owner == %user.id")])]
        }) { server in
            let frodo = try await server.app(device: "frodo").login(credentials: .anonymous)
            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            let frodoRealm = try await open(frodo)
            let samRealm = try await open(sam)
            for realm in [frodoRealm, samRealm] {
                try await update(realm) { subs in subs.append(QuerySubscription<SyncedTask>(name: "all")) }
            }
            try frodoRealm.write { frodoRealm.add(SyncedTask(value: ["name": "Frodo's", "owner": frodo.id])) }
            try samRealm.write { samRealm.add(SyncedTask(value: ["name": "Sam's", "owner": sam.id])) }
            for realm in [frodoRealm, samRealm] { try await realm.syncSession!.wait(for: .upload) }
            for realm in [frodoRealm, samRealm] { try await realm.syncSession!.wait(for: .download) }
            #expect(names(frodoRealm) == ["Frodo's"])
            #expect(names(samRealm) == ["Sam's"])
        }
    }

    @Test func initialSubscriptionsDownloadBeforeOpenAndNeverBlockOffline() async throws {
        try await withSyncTestServer { server in
            _ = try await seed(server, [("Ring", "Frodo"), ("Pans", "Sam")])
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            })
            configuration.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(names(realm) == ["Ring"])
            #expect(realm.subscriptions.first(named: "frodo's") != nil)

            let offline = try await server.app(device: "offline").login(credentials: .anonymous)
            try await server.stop()
            var offlineConfiguration = offline.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "all"))
            })
            offlineConfiguration.objectTypes = [SyncedTask.self]
            let offlineRealm = try await Realm(configuration: offlineConfiguration, downloadBeforeOpen: .never)
            #expect(offlineRealm.subscriptions.count == 1)
            #expect(offlineRealm.subscriptions.state == .pending)
        }
    }

    /// Issue 13's report: the initial subscriptions must run again on a later open with
    /// `rerunOnOpen`, even though the set was emptied since (and the realm is still open).
    @Test func rerunOnOpenRunsTheInitialSubscriptionsAgain() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let user = try await app.login(credentials: .anonymous)
            let first = try await open(user)
            try await update(first) { subs in subs.append(QuerySubscription<SyncedTask>(name: "all")) }
            try first.write {
                first.add(SyncedTask(value: ["name": "Ring", "owner": "Frodo"]))
                first.add(SyncedTask(value: ["name": "Pans", "owner": "Sam"]))
            }
            try await first.syncSession!.wait(for: .upload)
            try await update(first) { subs in subs.removeAll() }
            try await first.syncSession!.wait(for: .download)

            let again = try await app.login(credentials: .anonymous)
            #expect(again.id == user.id)
            var configuration = again.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<SyncedTask>(name: "frodo's") { $0.owner == "Frodo" })
            }, rerunOnOpen: true)
            configuration.objectTypes = [SyncedTask.self]
            let reopened = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            #expect(reopened.subscriptions.count == 1)
            #expect(reopened.subscriptions.first(named: "frodo's") != nil)
            #expect(names(reopened) == ["Ring"])
        }
    }

    /// Realm's documentation sample for `rerunOnOpen`: a subscription window of ± one week,
    /// recomputed on each open. Of a task due tomorrow and one due two weeks ago, only the first is
    /// in the realm, and nothing is reported as a compensating write.
    @Test func rerunOnOpenWithADateWindowShowsOnlyTheTasksInTheWindow() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            let user = try await app.login(credentials: .anonymous)
            var allConfiguration = user.flexibleSyncConfiguration()
            allConfiguration.objectTypes = [DatedTask.self]
            let first = try await Realm(configuration: allConfiguration, downloadBeforeOpen: .never)
            let subscriptions = first.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<DatedTask>(name: "all")) }
            let day: TimeInterval = 86_400
            try first.write {
                first.add(DatedTask(value: ["name": "Tomorrow", "dueDate": Date().addingTimeInterval(day)]))
                first.add(DatedTask(value: ["name": "Two weeks ago", "dueDate": Date().addingTimeInterval(-14 * day)]))
            }
            // Not waiting for the upload: the writes were made under "all", whenever they arrive.
            try await subscriptions.update { subscriptions.removeAll() }

            let again = try await app.login(credentials: .anonymous)
            let lastWeek = Date().addingTimeInterval(-7 * day)
            let nextWeek = Date().addingTimeInterval(7 * day)
            var configuration = again.flexibleSyncConfiguration(initialSubscriptions: { subs in
                subs.append(QuerySubscription<DatedTask> { $0.dueDate > lastWeek && $0.dueDate < nextWeek })
            }, rerunOnOpen: true)
            configuration.objectTypes = [DatedTask.self]
            let reopened = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            reopened.refresh()
            #expect(reopened.objects(DatedTask.self).map(\.name) == ["Tomorrow"])
            try await reopened.syncSession!.wait(for: .download)
            try await reopened.syncSession!.wait(for: .upload)
            reopened.refresh()
            #expect(reopened.objects(DatedTask.self).map(\.name) == ["Tomorrow"])
            #expect(errors.all.isEmpty, "\(errors.all)")
            withExtendedLifetime(first) {}
        }
    }

    @Test func resultsSubscribeWaitsForTheData() async throws {
        try await withSyncTestServer { server in
            _ = try await seed(server, [("Ring", "Frodo"), ("Pans", "Sam")])
            let user = try await server.app(device: "frodo").login(credentials: .anonymous)
            let realm = try await open(user)
            let sams = try await realm.objects(SyncedTask.self).where { $0.owner == "Sam" }.subscribe(name: "sam's")
            #expect(sams.map(\.name) == ["Pans"])
            sams.unsubscribe()
            try await realm.syncSession!.wait(for: .download)
            #expect(realm.subscriptions.first(named: "sam's") == nil)
        }
    }
}

/// Partition-based sync with read rules: each user reads only the partition named after them.
@MainActor @Suite(.serialized) struct PartitionPermissionTests {
    @Test func aPartitionTheUserMayNotReadIsRefusedWithPermissionDenied() async throws {
        try await withSyncTestServer({ configuration in
            configuration.apps = [.init(id: "test-app", syncKind: .partition, permissions: [.init(read: "partition == %user.id")])]
        }) { server in
            let app = server.app(device: "frodo")
            let frodo = try await app.login(credentials: .anonymous)
            let errors = Recorder<any Error>()
            app.syncManager.errorHandler = { error, _ in errors.append(error) }
            var own = frodo.configuration(partitionValue: frodo.id)
            own.objectTypes = [SyncedTask.self]
            let realm = try await Realm(configuration: own, downloadBeforeOpen: .always)
            try realm.write { realm.add(SyncedTask(value: ["name": "Mine"])) }
            try await realm.syncSession!.wait(for: .upload)

            var other = frodo.configuration(partitionValue: "someone else")
            other.objectTypes = [SyncedTask.self]
            _ = try await Realm(configuration: other, downloadBeforeOpen: .never)
            for _ in 0..<100 where errors.all.isEmpty { try await _Concurrency.Task.sleep(nanoseconds: 50_000_000) }
            let error = try #require(errors.all.first as? SyncError)
            #expect(error.code == .permissionDeniedError)
        }
    }
}

