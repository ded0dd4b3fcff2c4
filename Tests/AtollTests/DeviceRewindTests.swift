@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Testing

/// A device that goes back in time — its files restored from a backup, or its newest commits
/// lost in a power loss — never loses a write silently (issue 21 §6).
@MainActor @Suite(.serialized) struct DeviceRewindTests {
    /// Commits are synced to disk before an upload carrying them (or an ident naming what they
    /// stand on) leaves: the server never holds a commit the device can lose in a power loss. A
    /// realm that does not sync pays nothing.
    @Test func anUploadLeavesOnlyOnceItsCommitsAreOnDisk() async throws {
        let local = try TestRealm()
        let localRealm = try local.open()
        try localRealm.write { localRealm.add(Dog(value: ["name": "Rex"])) }
        #expect(Realm.logSyncCountForTesting(local.configuration) == 0)

        try await withSyncTestServer { server in
            let (realm, _) = try await server.shireDevice("frodo")
            let configuration = realm.configuration
            let atBind = Realm.logSyncCountForTesting(configuration)
            #expect(atBind >= 1, "the ident")
            try realm.write { realm.add(SyncedTask(value: ["name": "a"])) }
            try await realm.syncSession!.wait(for: .upload)
            #expect(Realm.logSyncCountForTesting(configuration) > atBind, "the upload")
        }
    }

    /// When the log cannot be synced before an upload (a full disk, an I/O error), the upload
    /// does not leave, and it is not lost either: the connection ends and the next bind sends it
    /// (the session had already counted it as sent).
    @Test func anUploadHeldBackByAFailedLogSyncLeavesAtTheNextBind() async throws {
        try await withSyncTestServer { server in
            let (realm, _) = try await server.shireDevice("frodo")
            Realm.failLogSyncsForTesting(realm.configuration, count: 1)
            try realm.write { realm.add(SyncedTask(value: ["name": "held"])) }

            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var samConfiguration = sam.configuration(partitionValue: "shire")
            samConfiguration.objectTypes = [SyncedTask.self]
            let other = try await Realm(configuration: samConfiguration, downloadBeforeOpen: .always)
            #expect(await waitUntil(timeout: .seconds(30)) { names(other) == ["held"] }, "the server has \(names(other))")
        }
    }

    /// A device syncs "a", its files are backed up, it syncs "b", and the backup is put back:
    /// its next write ("c") reuses the client version of "b", which the server holds. It must
    /// reach the server (and the device get "b" back), not be taken for a duplicate.
    @Test func aDeviceRestoredFromABackupSyncsItsNewWritesAndGetsItsLostOnesBack() async throws {
        try await withSyncTestServer { server in
            let app = server.app(device: "frodo")
            try await app.emailPasswordAuth.registerUser(email: "frodo@shire.me", password: "ring-bearer")
            let device = Device(app: app, credentials: .emailPassword(email: "frodo@shire.me", password: "ring-bearer"))

            try await device.run { realm in try realm.write { realm.add(SyncedTask(value: ["name": "a"])) } }
            let backup = try device.copyFiles(to: server.folder.url.appendingPathComponent("backup", isDirectory: true))
            try await device.run { realm in try realm.write { realm.add(SyncedTask(value: ["name": "b"])) } }
            try device.restoreFiles(from: backup)

            let user = try await app.login(credentials: device.credentials)
            let realm = try Realm(configuration: device.configuration(user))
            #expect(names(realm) == ["a"], "the restored copy")
            try realm.write { realm.add(SyncedTask(value: ["name": "c"])) }

            // The device resets (its copy went back in time), recovering "c" and getting "b" back.
            #expect(await waitUntil(timeout: .seconds(30)) { names(realm) == ["a", "b", "c"] }, "the device has \(names(realm))")
            // The outcome is recorded right after the reset's transaction commits.
            #expect(await waitUntil { realm.clientResetOutcome != nil })
            let outcome = try #require(realm.clientResetOutcome)
            #expect(outcome.didRecover && outcome.discardedChangeCount == 0)

            let sam = try await server.app(device: "sam").login(credentials: .anonymous)
            var samConfiguration = sam.configuration(partitionValue: "shire")
            samConfiguration.objectTypes = [SyncedTask.self]
            let other = try await Realm(configuration: samConfiguration, downloadBeforeOpen: .always)
            #expect(await waitUntil(timeout: .seconds(30)) { names(other) == ["a", "b", "c"] }, "the server has \(names(other))")
        }
    }
}

/// One device's user and synced realm (partition "shire"), opened for a while and then closed
/// for good, as an app that quits.
@MainActor private final class Device {
    let app: App
    let credentials: Credentials
    /// Where the realm file is (known after the first `run`).
    private var fileURL: URL?

    init(app: App, credentials: Credentials) {
        self.app = app
        self.credentials = credentials
    }

    func configuration(_ user: User) -> Realm.Configuration {
        var configuration = user.configuration(partitionValue: "shire", clientResetMode: .recoverUnsyncedChanges())
        configuration.objectTypes = [SyncedTask.self]
        return configuration
    }

    /// Logs in, opens the realm, runs `body`, waits until everything went up and came back, and
    /// closes the realm (logging out stops its session; the last `Realm` goes with `sync`).
    func run(_ body: (Realm) throws -> Void) async throws {
        let user = try await app.login(credentials: credentials)
        let configuration = configuration(user)
        try await sync(configuration, body)
        try await user.logOut()
        #expect(await waitUntil { !Realm.isOpenForTesting(configuration) }, "the realm is still open")
        fileURL = configuration.fileURL
    }

    private func sync(_ configuration: Realm.Configuration, _ body: (Realm) throws -> Void) async throws {
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
        try body(realm)
        try await realm.syncSession!.wait(for: .upload)
        try await realm.syncSession!.wait(for: .download)
    }

    /// The realm's files: the file itself and every file named after it (`-wal`, `-shm`, lock
    /// and note files…); the sync state is a table of the file.
    private func files() throws -> [URL] {
        let file = try #require(fileURL)
        return try FileManager.default.contentsOfDirectory(at: file.deletingLastPathComponent(), includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix(file.lastPathComponent) }
    }

    /// Copies every file of the realm into `backup` (a new folder), as a device backup would.
    func copyFiles(to backup: URL) throws -> URL {
        try FileManager.default.createDirectory(at: backup, withIntermediateDirectories: true)
        for file in try files() {
            try FileManager.default.copyItem(at: file, to: backup.appendingPathComponent(file.lastPathComponent))
        }
        return backup
    }

    /// Replaces the realm's files by the ones in `backup`, as a restore would.
    func restoreFiles(from backup: URL) throws {
        let folder = try #require(fileURL).deletingLastPathComponent()
        for file in try files() { try FileManager.default.removeItem(at: file) }
        for file in try FileManager.default.contentsOfDirectory(at: backup, includingPropertiesForKeys: nil) {
            try FileManager.default.copyItem(at: file, to: folder.appendingPathComponent(file.lastPathComponent))
        }
    }
}
