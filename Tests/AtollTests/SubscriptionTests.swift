@_spi(Testing) @testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// A flexible-sync realm of an offline user: the app's server address is an unused port and the
/// user is logged out, so no sync session ever starts. `FakeServer` plays the sync engine's part.
final class FlexibleSyncRealm {
    let folder: TemporaryFolder
    let user: User
    let configuration: Realm.Configuration

    init(initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil, rerunOnOpen: Bool = false) throws {
        folder = try TemporaryFolder("atoll-subscriptions")
        let app = App(id: "subscriptions", configuration: AppConfiguration(baseURL: "http://127.0.0.1:9", rootDirectory: folder.url))
        user = User(id: "offline-user", core: app.core)
        var configuration = if let initialSubscriptions {
            user.flexibleSyncConfiguration(initialSubscriptions: initialSubscriptions, rerunOnOpen: rerunOnOpen)
        } else {
            user.flexibleSyncConfiguration()
        }
        configuration.objectTypes = [Task.self, Dog.self, Person.self, Address.self]
        self.configuration = configuration
    }

    /// Opens the realm isolated to the caller's actor (tests on the main actor may resume on
    /// another thread after a suspension, so a thread-confined realm would not do).
    func open(_ isolation: isolated (any Actor)? = #isolation) async throws -> Realm {
        try await Realm(configuration: configuration, downloadBeforeOpen: .never)
    }

    deinit { folder.remove() }
}

/// What the sync engine does when the server answers a query set: marks it in a write
/// transaction of its own realm, then wakes the waiters.
enum FakeServer {
    static func mark(_ configuration: Realm.Configuration, version: Int64, error: String? = nil) throws {
        let realm = try Realm(configuration: configuration)
        realm.beginWrite()
        try realm.markSubscriptionSet(version: version, complete: error == nil, error: error)
        try realm.commitWrite(recordingHistory: false)
        SubscriptionEvents.stateChanged(path: configuration.storageKey)
    }

    static func newestVersion(_ configuration: Realm.Configuration) throws -> Int64 {
        try Realm(configuration: configuration).latestSubscriptionSet()?.version ?? 0
    }

    /// Polls (at most 5 s) until `version` is committed.
    static func untilCommitted(_ configuration: Realm.Configuration, version: Int64) async throws {
        for _ in 0..<500 {
            if try newestVersion(configuration) >= version { return }
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
        }
    }

    /// In the background: waits (at most 5 s) until `version` is committed, then answers it.
    static func willAnswer(_ configuration: Realm.Configuration, version: Int64, error: String? = nil) -> _Concurrency.Task<Void, Swift.Error> {
        _Concurrency.Task.detached {
            try await untilCommitted(configuration, version: version)
            try mark(configuration, version: version, error: error)
        }
    }
}

@MainActor @Suite(.timeLimit(.minutes(1))) struct SubscriptionTests {
    private func queries(_ realm: Realm) throws -> [String] {
        try realm.latestSubscriptionSet()?.queries.map { "\($0.objectType): \($0.query)" } ?? []
    }

    // MARK: Versions

    @Test func aNewRealmHasAnEmptyCompleteSet() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        #expect(realm.subscriptions.count == 0)
        #expect(realm.subscriptions.state == .complete)
        #expect(try realm.latestSubscriptionSet() == nil)
    }

    @Test func eachUpdateCommitsANewVersionCopyingThePreviousSet() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>(name: "open") { !$0.done }) }
        let first = try #require(try realm.latestSubscriptionSet())
        #expect(first.version == 1)
        #expect(first.queries == [TypeQuery(objectType: "Task", query: "NOT done == true")])

        subscriptions.commitNow { subscriptions.append(QuerySubscription<Dog>(where: "age > %d", 3)) }
        #expect(try realm.latestSubscriptionSet()?.version == 2)
        #expect(try queries(realm) == ["Task: NOT done == true", "Dog: age > 3"])
        #expect(subscriptions.count == 2)
        #expect(subscriptions.map(\.name) == ["open", nil])
        #expect(realm.subscriptions.count == 2)
    }

    @Test func updatesRecordNoHistory() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        try realm.write { realm.add(Task(value: ["name": "a"])) }
        let before = try realm.historyChangesets()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>()) }
        subscriptions.commitNow { subscriptions.removeAll() }
        #expect(try realm.historyChangesets() == before)
    }

    @Test func anUpdateThatChangesNothingStillCommitsAVersion() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow {}
        let first = try realm.latestSubscriptionSet()?.clientVersion ?? 0
        try realm.write { realm.add(Task(value: ["name": "a"])) }
        subscriptions.commitNow {}
        let latest = try #require(try realm.latestSubscriptionSet())
        #expect(latest.version == 2)
        #expect(latest.queries == [])
        #expect(latest.clientVersion == first + 2, "each set records the local version it committed as, after the write")
        #expect(try realm.historyChangesets().last?.version == first + 1)
    }

    @Test func anUpdateStartsFromTheNewestSetEvenThroughAnOlderSetValue() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let stale = realm.subscriptions
        let other = realm.subscriptions
        other.commitNow { other.append(QuerySubscription<Task>(name: "a")) }
        stale.commitNow { stale.append(QuerySubscription<Dog>(name: "b")) }
        #expect(stale.map(\.name) == ["a", "b"])
    }

    // MARK: Identity

    @Test func unnamedSubscriptionsAreIdentifiedByTypeAndQuery() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow {
            subscriptions.append(QuerySubscription<Task> { $0.priority > 3 && $0.owner == "Frodo" })
            // The same query written as text, spaced differently.
            subscriptions.append(QuerySubscription<Task>(where: "priority>3 and owner == %@", "Frodo"))
            subscriptions.append(QuerySubscription<Dog>(where: "age > 3 AND name == 'Frodo'"))
        }
        #expect(try queries(realm) == ["Task: priority > 3 AND owner == \"Frodo\"", "Dog: age > 3 AND name == \"Frodo\""])

        subscriptions.commitNow {
            subscriptions.append(QuerySubscription<Task>(name: "named") { $0.priority > 3 && $0.owner == "Frodo" })
        }
        #expect(subscriptions.count == 3)
        subscriptions.commitNow {
            subscriptions.append(QuerySubscription<Task> { $0.priority > 3 && $0.owner == "Frodo" })
        }
        #expect(subscriptions.count == 3)
    }

    @Test func appendingAnExistingNameReplacesItsQuery() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Frodo" }) }
        let added = try #require(subscriptions.first(named: "mine"))
        let createdAt = added.createdAt
        let updatedAt = added.updatedAt

        subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Frodo" }) }
        #expect(subscriptions.first(named: "mine")?.updatedAt == updatedAt)

        subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Sam" }) }
        let replaced = try #require(subscriptions.first(named: "mine"))
        #expect(subscriptions.count == 1)
        #expect(replaced.queryString == "owner == \"Sam\"")
        #expect(replaced.createdAt == createdAt)
        #expect(replaced.updatedAt > updatedAt)

        subscriptions.commitNow { subscriptions.append(QuerySubscription<Dog>(name: "mine")) }
        #expect(subscriptions.count == 1)
        #expect(subscriptions.first?.objectClassName == "Dog")
        #expect(subscriptions.first?.queryString == "TRUEPREDICATE")
    }

    // MARK: Finding and removing

    private func fourSubscriptions(_ subscriptions: SyncSubscriptionSet) {
        subscriptions.commitNow {
            subscriptions.append(QuerySubscription<Task>(name: "a") { $0.done })
            subscriptions.append(QuerySubscription<Dog>(name: "b") { $0.age > 1 })
            subscriptions.append(QuerySubscription<Task> { $0.priority > 5 })
            subscriptions.append(QuerySubscription<Dog>(where: "age > 3"))
        }
    }

    @Test func subscriptionsAreFoundByNameQueryAndPosition() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        fourSubscriptions(subscriptions)
        #expect(subscriptions.first(named: "b")?.objectClassName == "Dog")
        #expect(subscriptions.first(named: "zzz") == nil)
        #expect(subscriptions.first(ofType: Task.self) { $0.priority > 5 }?.name == nil)
        #expect(subscriptions.first(ofType: Task.self) { $0.done }?.name == "a")
        #expect(subscriptions.first(ofType: Dog.self, where: "age > %d", 3) != nil)
        #expect(subscriptions.first(ofType: Task.self, where: "age > %d", 3) == nil)
        #expect(subscriptions[1]?.name == "b")
        #expect(subscriptions[4] == nil)
        #expect(subscriptions.first?.name == "a")
        #expect(subscriptions.last?.queryString == "age > 3")
        #expect(Array(subscriptions).map(\.objectClassName) == ["Task", "Dog", "Task", "Dog"])
    }

    @Test func removingByNameQuerySubscriptionOrType() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        fourSubscriptions(subscriptions)
        subscriptions.commitNow {
            subscriptions.remove(named: "a", "not there")
            subscriptions.remove(ofType: Dog.self, where: "age > 3")
        }
        #expect(subscriptions.map(\.queryString) == ["age > 1", "priority > 5"])

        fourSubscriptions(subscriptions)
        subscriptions.commitNow { subscriptions.removeAll(unnamedOnly: true) }
        #expect(subscriptions.map(\.name) == ["b", "a"])

        fourSubscriptions(subscriptions)
        subscriptions.commitNow { subscriptions.removeAll(ofType: Dog.self) }
        #expect(subscriptions.map(\.queryString) == ["done == true", "priority > 5"])

        subscriptions.commitNow {
            subscriptions.remove(try! #require(subscriptions.first(named: "a")))
            subscriptions.remove(ofType: Task.self) { $0.priority > 5 }
        }
        #expect(subscriptions.count == 0)

        fourSubscriptions(subscriptions)
        subscriptions.commitNow { subscriptions.removeAll() }
        #expect(subscriptions.count == 0)
    }

    @Test func updateQueryReplacesTheQueryOfASubscription() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        fourSubscriptions(subscriptions)
        subscriptions.commitNow {
            subscriptions.first(named: "a")?.updateQuery(toType: Task.self) { $0.owner == "Sam" }
            // Inside the block the set shows the change at once.
            #expect(subscriptions.first(named: "a")?.queryString == "owner == \"Sam\"")
            subscriptions.first(named: "b")?.updateQuery(to: "name BEGINSWITH %@", "R")
            subscriptions.first(ofType: Task.self) { $0.priority > 5 }?.updateQuery(toType: Task.self)
        }
        #expect(try queries(realm) == ["Task: owner == \"Sam\"", "Dog: name BEGINSWITH \"R\"", "Task: TRUEPREDICATE", "Dog: age > 3"])
    }

    // MARK: Query text

    @Test func typedQueriesAreSentAsQueryText() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        subscriptions.commitNow {
            subscriptions.append(QuerySubscription<Task>(name: "all_tasks"))
            subscriptions.append(QuerySubscription<Task> { ($0.owner == "Frodo" || $0.owner.starts(with: "S", options: .caseInsensitive)) && !$0.done })
            subscriptions.append(QuerySubscription<Person> { $0.dogs.name == "Rex" && $0.age.in([19, 45]) && $0.tags.count > 1 })
            subscriptions.append(QuerySubscription<Person>(where: "name == $0 AND height == nil", "Ann \"the\" 'first'"))
            subscriptions.append(QuerySubscription<Person>(where: "ANY dogs.age >= %@", 3.5))
            subscriptions.append(QuerySubscription<Person>(where: "height > %@ OR NOT name CONTAINS 'x'", 1.5))
        }
        #expect(try queries(realm) == [
            "Task: TRUEPREDICATE",
            "Task: (owner == \"Frodo\" OR owner BEGINSWITH[c] \"S\") AND NOT done == true",
            "Person: ANY dogs.name == \"Rex\" AND age IN {19, 45} AND tags.@count > 1",
            "Person: name == \"Ann \\\"the\\\" 'first'\" AND height == nil",
            "Person: ANY dogs.age >= 3.5",
            "Person: height > 1.5 OR NOT name CONTAINS \"x\"",
        ])
        // Each text parses back to the same query.
        for query in try #require(try realm.latestSubscriptionSet()).queries {
            let parsed = try QueryExpression.parse(query.query)
            #expect(parsed.description == query.query)
        }
    }

    @Test func resultsSubscribeWithTheirFilterOnly() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let results = realm.objects(Task.self).filter("priority > %d", 2).where { $0.owner == "Frodo" }
            .sorted(byKeyPath: "name").distinct(by: ["owner"])
        _ = try await results.subscribe(waitForSync: .never)
        _ = try await realm.objects(Dog.self).subscribe(name: "dogs", waitForSync: .never)
        #expect(try queries(realm) == ["Task: priority > 2 AND owner == \"Frodo\"", "Dog: TRUEPREDICATE"])
    }

    // MARK: States

    @Test func statesFollowTheServersAnswers() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let v1 = realm.subscriptions
        v1.commitNow { v1.append(QuerySubscription<Task>(name: "a")) }
        #expect(v1.state == .pending)
        try FakeServer.mark(t.configuration, version: 1)
        #expect(v1.state == .complete)

        // A complete set stays complete while a newer one is pending…
        let v2 = realm.subscriptions
        v2.commitNow { v2.append(QuerySubscription<Dog>(name: "b")) }
        #expect(v1.state == .complete)
        #expect(v2.state == .pending)

        // …a pending one is superseded as soon as a newer one is committed.
        let v3 = realm.subscriptions
        v3.commitNow { v3.remove(named: "b") }
        #expect(v2.state == .superseded)
        #expect(v3.state == .pending)

        try FakeServer.mark(t.configuration, version: 3, error: "bad query")
        #expect(v3.state == .error(SyncError(.invalidFlexibleSyncSubscriptions, "bad query")))
        #expect(realm.subscriptions.state == .error(SyncError(.invalidFlexibleSyncSubscriptions, "bad query")))

        // Once a newer one completes, every older version is superseded.
        let v4 = realm.subscriptions
        v4.commitNow { v4.append(QuerySubscription<Dog>(name: "c")) }
        try FakeServer.mark(t.configuration, version: 4)
        #expect(v4.state == .complete)
        #expect(v1.state == .superseded)
        #expect(v3.state == .superseded)
        #expect(v4.map(\.name) == ["a", "c"])

        // A late answer for a superseded version changes nothing.
        try FakeServer.mark(t.configuration, version: 2)
        #expect(v2.state == .superseded)
        #expect(v4.state == .complete)
    }

    @Test func marksNeedTheEnginesWriteTransaction() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        #expect(throws: Realm.Error.self) { try realm.markSubscriptionSet(version: 1, complete: true, error: nil) }
    }

    @Test func statesCompareLikeRealms() {
        #expect(SyncSubscriptionState.pending == .pending)
        #expect(SyncSubscriptionState.pending != .complete)
        #expect(SyncSubscriptionState.superseded != .complete)
        #expect(SyncSubscriptionState.error(SyncError(.invalidFlexibleSyncSubscriptions, "x"))
            == .error(SyncError(.invalidFlexibleSyncSubscriptions, "x")))
        #expect(SyncSubscriptionState.error(SyncError(.invalidFlexibleSyncSubscriptions, "x"))
            != .error(SyncError(.invalidFlexibleSyncSubscriptions, "y")))
        #expect(SyncSubscriptionState.error(SyncError(.invalidFlexibleSyncSubscriptions, "x")) != .pending)
    }

    // MARK: Waiting for the server

    @Test func asyncUpdateReturnsOnceTheServerCompletedTheSet() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        let server = FakeServer.willAnswer(t.configuration, version: 1)
        try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
        #expect(subscriptions.state == .complete)
        try await server.value
    }

    @Test func asyncUpdateThrowsTheServersRejection() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        let server = FakeServer.willAnswer(t.configuration, version: 1, error: "unknown field 'x'")
        do {
            try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
            Issue.record("the update did not throw")
        } catch let error as SyncError {
            #expect(error.code == .invalidFlexibleSyncSubscriptions)
            #expect(error.message == "unknown field 'x'")
        }
        try await server.value
    }

    @Test func asyncUpdateReturnsWhenANewerSetSupersedesIt() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        // Another realm of the file commits version 2 while version 1 waits.
        let other = _Concurrency.Task.detached { [configuration = t.configuration] in
            try await FakeServer.untilCommitted(configuration, version: 1)
            let realm = try Realm(configuration: configuration)
            try realm.subscriptions.box.commit {}
        }
        try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
        #expect(subscriptions.state == .superseded)
        try await other.value
    }

    @Test func updateWithOnCompleteReturnsAtOnceAndCallsBackLater() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        let (answers, answer) = AsyncStream<String?>.makeStream()
        subscriptions.update({ subscriptions.append(QuerySubscription<Task>(name: "all")) },
                             onComplete: { error in answer.yield(error.map { "\($0)" }) })
        // Offline, nothing answered yet: the caller was not blocked.
        #expect(subscriptions.state == .pending)
        #expect(subscriptions.count == 1)

        try FakeServer.mark(t.configuration, version: 1)
        let first = try await withTimeout { await answers.first { _ in true } }
        #expect(first == .some(nil))
    }

    @Test func onCompleteHearsTheRejection() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        let (answers, answer) = AsyncStream<String?>.makeStream()
        subscriptions.update({ subscriptions.append(QuerySubscription<Task>(name: "all")) },
                             onComplete: { error in answer.yield(error.map { ($0 as? SyncError)?.message ?? "\($0)" }) })
        try FakeServer.mark(t.configuration, version: 1, error: "no")
        let first = try await withTimeout { await answers.first { _ in true } }
        #expect(first == "no")
    }

    @Test func waitingEndsWhenItsTaskIsCancelled() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let subscriptions = realm.subscriptions
        // In an async context the block-only `update` is the waiting one; this form returns at once.
        subscriptions.update({ subscriptions.append(QuerySubscription<Task>(name: "all")) }, onComplete: nil)
        let wait = subscriptions.box.wait(for: 1)
        let waiting = _Concurrency.Task { try await wait.run(timeout: nil) }
        try await _Concurrency.Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let result = try await withTimeout { await waiting.result }
        #expect(throws: CancellationError.self) { try result.get() }
    }

    // MARK: Results.subscribe

    @Test func subscribeNeverWaitsAndAddsTheSubscriptionOnce() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let open = realm.objects(Task.self).where { !$0.done }
        _ = try await open.subscribe(waitForSync: .never)
        _ = try await open.subscribe(waitForSync: .never)
        #expect(realm.subscriptions.count == 1)
        #expect(try realm.latestSubscriptionSet()?.version == 1)
        _ = try await open.subscribe(name: "open", waitForSync: .never)
        #expect(realm.subscriptions.count == 2)
    }

    @Test func subscribeOnCreationTimesOutOfflineAndKeepsTheSubscription() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        do {
            _ = try await realm.objects(Task.self).where { $0.priority > 1 }.subscribe(name: "p", timeout: 0.2)
            Issue.record("subscribe did not time out")
        } catch let error as POSIXError {
            #expect(error.code == .ETIMEDOUT)
        }
        #expect(realm.subscriptions.first(named: "p")?.queryString == "priority > 1")
        // Existing now: `.onCreation` returns at once, without a new version.
        _ = try await realm.objects(Task.self).where { $0.priority > 1 }.subscribe(name: "p", timeout: 0.2)
        #expect(try realm.latestSubscriptionSet()?.version == 1)
    }

    @Test func subscribeWaitsForTheServerAndShowsItsObjects() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let server = _Concurrency.Task.detached { [configuration = t.configuration] in
            try await FakeServer.untilCommitted(configuration, version: 1)
            // The engine integrates the bootstrap and completes the set in one transaction.
            let realm = try Realm(configuration: configuration)
            realm.beginWrite()
            realm.add(Task(value: ["name": "from the server", "owner": "Frodo"]))
            try realm.markSubscriptionSet(version: 1, complete: true, error: nil)
            try realm.commitWrite(recordingHistory: false)
            SubscriptionEvents.stateChanged(path: configuration.storageKey)
        }
        let mine = try await realm.objects(Task.self).where { $0.owner == "Frodo" }.subscribe(name: "mine")
        #expect(mine.map(\.name) == ["from the server"])
        try await server.value
    }

    @Test func subscribeAlwaysCommitsANewVersionAndWaits() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let tasks = realm.objects(Task.self)
        _ = try await tasks.subscribe(waitForSync: .never)
        let server = FakeServer.willAnswer(t.configuration, version: 2)
        _ = try await tasks.subscribe(waitForSync: .always)
        #expect(realm.subscriptions.count == 1)
        #expect(realm.subscriptions.state == .complete)
        try await server.value
    }

    @Test func subscribeWithATakenNameUpdatesItsQuery() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        _ = try await realm.objects(Task.self).where { $0.priority > 1 }.subscribe(name: "p", waitForSync: .never)
        _ = try await realm.objects(Task.self).where { $0.priority > 2 }.subscribe(name: "p", waitForSync: .never)
        #expect(realm.subscriptions.map(\.queryString) == ["priority > 2"])
    }

    @Test func unsubscribeRemovesTheSubscriptionTheResultsMade() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        let adults = realm.objects(Dog.self).where { $0.age > 1 }
        let named = try await adults.subscribe(name: "overOne", waitForSync: .never)
        _ = try await realm.objects(Dog.self).where { $0.age > 1 }.subscribe(name: "adults", waitForSync: .never)
        let unnamed = try await realm.objects(Dog.self).where { $0.age > 1 }.subscribe(waitForSync: .never)
        #expect(realm.subscriptions.count == 3)

        named.unsubscribe()
        #expect(realm.subscriptions.map(\.name) == ["adults", nil])
        unnamed.unsubscribe()
        #expect(realm.subscriptions.map(\.name) == ["adults"])
        let versionBefore = try realm.latestSubscriptionSet()?.version
        unnamed.unsubscribe()
        #expect(try realm.latestSubscriptionSet()?.version == versionBefore)
    }

    // MARK: Persistence

    @Test func subscriptionsAndStatesSurviveReopeningTheRealm() async throws {
        let t = try FlexibleSyncRealm()
        do {
            let realm = try await t.open()
            let subscriptions = realm.subscriptions
            subscriptions.commitNow {
                subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Frodo" })
                subscriptions.append(QuerySubscription<Dog>())
            }
            try FakeServer.mark(t.configuration, version: 1)
            subscriptions.commitNow { subscriptions.remove(named: "mine") }
        }
        #expect(!RealmCoordinator.isOpen(t.configuration))
        let realm = try await t.open()
        #expect(realm.subscriptions.map(\.objectClassName) == ["Dog"])
        #expect(realm.subscriptions.state == .pending)
        #expect(try realm.latestSubscriptionSet()?.version == 2)
        try FakeServer.mark(t.configuration, version: 2)
        #expect(realm.subscriptions.state == .complete)
    }

    // MARK: Initial subscriptions

    @Test func theConfigurationKeepsTheInitialSubscriptions() async throws {
        let t = try FlexibleSyncRealm(initialSubscriptions: { subs in subs.append(QuerySubscription<Task>(name: "all_tasks")) },
                                      rerunOnOpen: true)
        let sync = try #require(t.configuration.syncConfiguration)
        #expect(sync.enableFlexibleSync)
        #expect(sync.initialSubscriptions != nil)
        #expect(sync.rerunOnOpen)
        #expect(t.user.flexibleSyncConfiguration().syncConfiguration?.initialSubscriptions == nil)
    }

    @Test func initialSubscriptionsApplyToARealmWithoutSubscriptionsOnly() async throws {
        let t = try FlexibleSyncRealm(initialSubscriptions: { subs in
            subs.append(QuerySubscription<Task>(name: "all_tasks"))
        })
        let sync = try #require(t.configuration.syncConfiguration)
        do {
            // Opening the file applies them, without waiting for the server.
            let realm = try await t.open()
            #expect(try queries(realm) == ["Task: TRUEPREDICATE"])
            #expect(realm.subscriptions.state == .pending)
            try sync.applyInitialSubscriptions(realm)
            #expect(try realm.latestSubscriptionSet()?.version == 1)
        }
        #expect(!RealmCoordinator.isOpen(t.configuration))
        let reopened = try await t.open()
        #expect(try reopened.latestSubscriptionSet()?.version == 1)
    }

    @Test func initialSubscriptionsRunAgainWithRerunOnOpen() async throws {
        let runs = Recorder<Void>()
        let t = try FlexibleSyncRealm(initialSubscriptions: { subs in
            runs.append(())
            let run = runs.all.count
            if subs.first(named: "all_tasks") == nil {
                subs.append(QuerySubscription<Task>(name: "all_tasks"))
            }
            subs.append(QuerySubscription<Task>(where: "priority > %d", run))
        }, rerunOnOpen: true)
        do {
            let realm = try await t.open()
            #expect(try queries(realm) == ["Task: TRUEPREDICATE", "Task: priority > 1"])
        }
        #expect(!RealmCoordinator.isOpen(t.configuration))
        let realm = try await t.open()
        #expect(try realm.latestSubscriptionSet()?.version == 2)
        #expect(try queries(realm) == ["Task: TRUEPREDICATE", "Task: priority > 1", "Task: priority > 2"])
        // Called directly, it runs again too.
        try #require(t.configuration.syncConfiguration).applyInitialSubscriptions(realm)
        #expect(try realm.latestSubscriptionSet()?.version == 3)
        #expect(runs.all.count == 3)
    }

    @Test func initialSubscriptionsDoNothingWithoutABlock() async throws {
        let t = try FlexibleSyncRealm()
        let realm = try await t.open()
        try t.configuration.syncConfiguration?.applyInitialSubscriptions(realm)
        #expect(try realm.latestSubscriptionSet() == nil)
    }

    // MARK: Misuse

    @Test func changingTheSetOutsideUpdateTraps() async {
        await #expect(processExitsWith: .failure) {
            let t = try FlexibleSyncRealm()
            let realm = try await t.open()
            realm.subscriptions.append(QuerySubscription<Task>())
        }
    }

    @Test func subscriptionsOfARealmWithoutFlexibleSyncTrap() async {
        await #expect(processExitsWith: .failure) {
            let folder = try TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration(objectTypes: [Task.self]))
            _ = realm.subscriptions
        }
    }

    @Test func updatingTheQueryToAnotherTypeTraps() async {
        await #expect(processExitsWith: .failure) {
            let t = try FlexibleSyncRealm()
            let realm = try await t.open()
            let subscriptions = realm.subscriptions
            subscriptions.commitNow {
                subscriptions.append(QuerySubscription<Task>(name: "a"))
                subscriptions.first(named: "a")?.updateQuery(toType: Dog.self)
            }
        }
    }

    @Test func anInvalidQueryTraps() async {
        await #expect(processExitsWith: .failure) {
            let t = try FlexibleSyncRealm()
            let realm = try await t.open()
            let subscriptions = realm.subscriptions
            subscriptions.commitNow { subscriptions.append(QuerySubscription<Task>(where: "nope > 1")) }
        }
    }
}

extension SyncSubscriptionSet {
    /// `update(_:onComplete:)` without a callback: commits and returns (in an async context a bare
    /// `update {}` is the waiting form).
    func commitNow(_ block: () -> Void) { update(block, onComplete: nil) }
}
