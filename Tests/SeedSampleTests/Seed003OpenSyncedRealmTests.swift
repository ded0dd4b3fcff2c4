import Atoll
import AtollTesting
import Foundation
import Testing

// Seed 003 (configure and open a synced realm). Each sample's code is as on the page; only
// `App(id: …)` passes the test server's configuration.

// MARK: Sample 1 — open a flexible-sync realm

// Opening a realm and accessing it must be done from the same thread.
// Marking this function as `@MainActor` avoids threading-related issues.
@MainActor
func openFlexibleSyncRealm() async throws -> Realm {
    let app = App(id: APPID, configuration: seedAppConfiguration)
    let credentials = emailPasswordCredentials(app: app)
    let user = try await app.login(credentials: credentials)
    var config = user.flexibleSyncConfiguration()
    // Pass object types to the Flexible Sync configuration
    // as a temporary workaround for not being able to add complete schema
    // for a Flexible Sync app
    config.objectTypes = [Task.self, Team.self]
    let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
    print("Successfully opened realm: \(realm)")
    return realm
}

// MARK: Sample 3 — open a synced realm as another user (writeCopy)

// Opening a realm and accessing it must be done from the same thread.
// Marking this function as `@MainActor` avoids threading-related issues.
@MainActor
func convertSyncedRealmForAnotherUser() async throws {
    let app = App(id: YOUR_APP_SERVICES_APP_ID, configuration: seedAppConfiguration)

    // Log in the user whose realm you want to use with another sync user
    let frodoBaggins = try await app.login(credentials: Credentials.anonymous)
    var frodoConfig = frodoBaggins.configuration(partitionValue: "Some Partition Value")
    frodoConfig.objectTypes = [QsTask.self]

    // Open the synced realm, and confirm it contains the data we want
    // the other user to be able to access.
    let frodoRealm = try await Realm(configuration: frodoConfig, downloadBeforeOpen: .always)

    let frodoRealmTasks = frodoRealm.objects(QsTask.self)
    let frodoSyncedTasks = frodoRealmTasks.where { $0.owner == "Frodo" }
    XCTAssertEqual(frodoSyncedTasks.count, 3)
    print("Successfully opened frodo's realm and it contains this many tasks: \(frodoSyncedTasks.count)")

    // Log in as the user who will work with frodo's synced realm
    let samwiseGamgee = try await app.login(credentials: Credentials.anonymous)
    var samConfig = samwiseGamgee.configuration(partitionValue: "Some Partition Value")
    samConfig.objectTypes = [QsTask.self]

    // Specify an output directory for the copied realm
    // We're using FileManager here for tested code examples.
    guard let outputDir = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first else { return }

    // Append a file name to complete the path
    let copiedRealmFilePath = outputDir.appendingPathComponent("copied.realm")

    // Update the config file path to the path where you want to save the copied realm
    samConfig.fileURL = copiedRealmFilePath

    // Make a copy of frodo's realm that uses sam's config
    try frodoRealm.writeCopy(configuration: samConfig)

    // Open sam's realm, and see that it contains the same data as frodo's realm
    let samRealm = try await Realm(configuration: samConfig)
    let samRealmTasks = samRealm.objects(QsTask.self)
    var samSyncedTasks = samRealmTasks.where { $0.owner == "Frodo" }
    print("Successfully opened sam's realm and it contains this many tasks: \(samSyncedTasks.count)")

    XCTAssertEqual(frodoSyncedTasks.count, samSyncedTasks.count)

    // Add a task to sam's realm
    let task = QsTask(value: ["name": "Keep an eye on that Gollum", "owner": "Sam"])

    try! samRealm.write {
        samRealm.add(task)
    }

    // See that the new task reflects in sam's realm, but not frodo's
    samSyncedTasks = samRealmTasks.where { $0.owner == "Sam" }
    XCTAssertEqual(samSyncedTasks.count, 1)

    let samTasksInFrodoRealm = frodoRealmTasks.where { $0.owner == "Sam" }
    XCTAssertEqual(samTasksInFrodoRealm.count, 0)
}

// MARK: Sample 4 — open a synced realm with Swift concurrency (actor-isolated)

func mainThreadFunction() async throws {
    // Initialize the app client and authenticate a user
    let app = App(id: APPID, configuration: seedAppConfiguration)
    let user = try await app.login(credentials: Credentials.anonymous)

    // Configure the synced realm
    var flexSyncConfig = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
        subs.append(QuerySubscription<Todo>(name: "all_todos"))})
    flexSyncConfig.objectTypes = [Todo.self]

    // Open and use the synced realm
    let realm = try await Realm(configuration: flexSyncConfig, actor: MainActor.shared, downloadBeforeOpen: .always)
    try await useTheSyncedRealm(realm: realm)
}

/// What the page leaves to the reader: here, check that the subscription brought the todos.
@MainActor
func useTheSyncedRealm(realm: Realm) async throws {
    seedObservedTodoNames = realm.objects(Todo.self).map(\.name).sorted()
}
nonisolated(unsafe) var seedObservedTodoNames: [String] = []

// MARK: Sample 5 — download changes before open

@MainActor
func getRealmAfterDownloadingUpdates() async throws -> Realm {
    let app = App(id: APPID, configuration: seedAppConfiguration)
    let user = try await app.login(credentials: Credentials.anonymous)
    var configuration = user.flexibleSyncConfiguration()
    configuration.objectTypes = [FlexibleSync_Task.self, FlexibleSync_Team.self]
    let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    print("Successfully opened realm after downloading: \(realm)")
    return realm
}

// MARK: Sample 6 — open a synced realm offline

// Log the user into the backend app.
// The first time you login, the user must have a network connection.
func getUser() async throws -> User {
    // Check for an existing user.
    // If the user is offline but credentials are
    // cached, this returns the existing user.
    if let user = app.currentUser {
        return user
    } else {
        // If the device has no cached user
        // credentials, log them in.
        let app = App(id: YOUR_APP_SERVICES_APP_ID, configuration: seedAppConfiguration)
        let loggedInUser = try await app.login(credentials: Credentials.anonymous)
        return loggedInUser
    }
}

@MainActor @Suite(.serialized) struct Seed003OpenSyncedRealmTests {
    @Test func openAFlexibleSyncRealm() async throws {
        try await withSeedServer { _ in
            let realm = try await openFlexibleSyncRealm()
            // A flexible-sync realm holds nothing until it subscribes.
            #expect(realm.objects(Task.self).isEmpty)
            #expect(realm.syncSession != nil)
        }
    }

    @Test func openASyncedRealmInMemory() async throws {
        try await withSeedServer { _ in
            // Instantiate the app and get a user.
            let app = App(id: APPID, configuration: seedAppConfiguration)
            let user = try await app.login(credentials: Credentials.anonymous)
            // Create a configuration.
            var configuration = user.flexibleSyncConfiguration()
            configuration.objectTypes = [Task.self, Team.self]
            // Specify an in-memory identifier for the configuration.
            configuration.inMemoryIdentifier = "YOUR-IDENTIFIER-STRING"
            // Open a Realm with this configuration.
            let realm = try await Realm(configuration: configuration)
            print("Successfully opened realm: \(realm)")
            // Add subscriptions and work with the realm
            let subscriptions = realm.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<Task>(name: "all")) }
            try realm.write { realm.add(Task(value: ["taskName": "In memory"])) }
            try await realm.syncSession!.wait(for: .upload)
            // Nothing of it is on disk: no realm file anywhere under the device's folder.
            let root = seedAppConfiguration.rootDirectory!
            let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
            #expect(!files.contains { $0.hasSuffix(".realm") })
        }
    }

    @Test func openASyncedRealmAsAnotherUser() async throws {
        try await withSeedServer { server in
            let copied = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first!.appendingPathComponent("copied.realm")
            let cleanUp = { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copied.path + suffix) } }
            cleanUp()
            defer { cleanUp() }
            // The page's data: three of Frodo's tasks in the partition, written by another device.
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            var writerConfig = writer.configuration(partitionValue: "Some Partition Value")
            writerConfig.objectTypes = [QsTask.self]
            let writerRealm = try await Realm(configuration: writerConfig)
            try writerRealm.write {
                for name in ["Carry the ring", "Leave the Shire", "Meet Gandalf"] { writerRealm.add(QsTask(value: ["name": name, "owner": "Frodo"])) }
            }
            try await writerRealm.syncSession!.wait(for: .upload)

            try await convertSyncedRealmForAnotherUser()

            // The copy syncs as its own client: Sam's task reaches the server.
            var samConfig = app.currentUser!.configuration(partitionValue: "Some Partition Value")
            samConfig.objectTypes = [QsTask.self]
            samConfig.fileURL = copied
            let samRealm = try await Realm(configuration: samConfig)
            try await samRealm.syncSession!.wait(for: .upload)
            try await writerRealm.syncSession!.wait(for: .download)
            writerRealm.refresh()
            #expect(writerRealm.objects(QsTask.self).where { $0.owner == "Sam" }.count == 1)
        }
    }

    @Test func writeCopyAcrossSyncKindsFails() async throws {
        try await withSeedServer { _ in
            let user = try await app.login(credentials: .anonymous)
            var partition = user.configuration(partitionValue: "Some Partition Value")
            partition.objectTypes = [QsTask.self]
            let realm = try await Realm(configuration: partition)
            var flexible = user.flexibleSyncConfiguration()
            flexible.objectTypes = [QsTask.self]
            flexible.fileURL = partition.fileURL!.deletingLastPathComponent().appendingPathComponent("flexible-copy.realm")
            #expect { try realm.writeCopy(configuration: flexible) } throws: { error in
                (error as? Realm.Error)?.code == .invalidConfiguration && "\(error)".contains("flexible-sync configuration")
            }
        }
    }

    @Test func openWithSwiftConcurrency() async throws {
        try await withSeedServer { server in
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            var writerConfig = writer.flexibleSyncConfiguration(initialSubscriptions: { $0.append(QuerySubscription<Todo>(name: "all")) })
            writerConfig.objectTypes = [Todo.self]
            let writerRealm = try await Realm(configuration: writerConfig, downloadBeforeOpen: .always)
            try writerRealm.write { writerRealm.add(Todo(value: ["name": "Buy lembas", "owner": "Sam"])) }
            try await writerRealm.syncSession!.wait(for: .upload)

            try await mainThreadFunction()
            #expect(seedObservedTodoNames == ["Buy lembas"])
        }
    }

    @Test func downloadChangesBeforeOpen() async throws {
        try await withSeedServer { _ in
            let realm = try await getRealmAfterDownloadingUpdates()
            print("The open realm is: \(realm)")
            // Add subscription and work with the realm
            let subscriptions = realm.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<FlexibleSync_Task>(name: "all")) }
            #expect(realm.subscriptions.state == .complete)
        }
    }

    @Test func openASyncedRealmOffline() async throws {
        try await withSeedServer { server in
            // First run, online: the user logs in.
            _ = try await app.login(credentials: .anonymous)
            try await server.stop()
            // Offline: the cached user opens the realm.
            let user = try await getUser()
            var configuration = user.configuration(partitionValue: "Some Partition Value")
            // Open a Realm with this configuration.
            // If you do not require the app to download updates
            // before opening the realm, the realm just opens, even if
            // offline.
            let realm = try await Realm(configuration: configuration)
            print("Successfully opened realm: \(realm)")
            #expect(realm.isEmpty)
        }
    }
}
