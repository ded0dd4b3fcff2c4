import Atoll
import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation

/// W6: a realm holding 10,000 synced Tasks and 1,000 unsynced changes (creates, updates, deletes)
/// goes through `.recoverUnsyncedChanges` after sync was terminated and enabled again (the reset a
/// restore causes: the server's history under a new epoch); seconds from the session resuming
/// (it then binds, gets "reset required", downloads the fresh copy and applies it) to the after
/// block. The baseline: raw SQLite inserting the 10,000 rows and applying the 1,000 changes.
struct ResetBenchmark {
    let objects = SyncBenchmark.setting("ATOLL_BENCH_W6_OBJECTS", 10_000)
    let changes = SyncBenchmark.setting("ATOLL_BENCH_W6_CHANGES", 1_000)

    func run() async throws {
        let all = TaskRow.generate(objects + changes * 4 / 10, seed: 6)
        let rows = Array(all.prefix(objects))
        let created = Array(all.dropFirst(objects))
        let updated = rows.prefix(changes * 4 / 10)
        let deleted = rows.suffix(changes - created.count - updated.count)
        let baseline = try rawBaseline(rows, created: created, updated: Array(updated), deleted: Array(deleted))

        let server = try await SyncTestServer.start(realTime: true)
        let admin = AdminClient(server: server.server.baseURL, key: server.server.adminKey)
        var appConfiguration = server.appConfiguration(device: "w6")
        appConfiguration.syncConnectTimeout = 120
        let user = try await App(id: server.appId, configuration: appConfiguration).login(credentials: .anonymous)
        let (afterResets, continuation) = AsyncStream<UInt64>.makeStream()
        var configuration = user.configuration(partitionValue: "w6", clientResetMode: .recoverUnsyncedChanges(
            afterReset: { _, _ in continuation.yield(DispatchTime.now().uptimeNanoseconds) }))
        configuration.objectTypes = BenchTask.syncedTypes
        let device = ResetDevice()
        try await device.open(configuration)
        try await device.add(rows[...])
        try await device.wait(for: .upload)
        try await device.suspend()
        try await device.change(created: created, updated: Array(updated), deleted: Array(deleted))
        try await admin.terminateSync(app: server.appId)
        try await admin.enableSync(app: server.appId)

        let start = DispatchTime.now().uptimeNanoseconds
        await device.resume()
        var iterator = afterResets.makeAsyncIterator()
        guard let end = await iterator.next() else { throw BenchFailure("W6: no client reset happened") }
        let seconds = Double(end - start) / 1e9
        let count = await device.count
        let expected = objects + created.count - deleted.count
        guard count == expected else { throw BenchFailure("W6: \(count) objects after the reset, expected \(expected)") }

        report("sqlite", "W6_baseline", baseline, "s")
        report("atoll", "W6", seconds, "s")
        report("atoll", "W6_time_ratio", seconds / baseline, "x")
        await device.close()
        try await server.tearDown()
    }

    private func rawBaseline(_ rows: [TaskRow], created: [TaskRow], updated: [TaskRow], deleted: [TaskRow]) throws -> Double {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try RawSQLite(path: folder.appendingPathComponent("raw.sqlite").path)
        return try measure {
            try sqlite.insertAll(rows)
            try sqlite.insertAll(created)
            try sqlite.updateOwners(of: updated, to: "recovered")
            try sqlite.delete(deleted)
        }
    }
}

/// The W6 device's realm, confined to this actor.
actor ResetDevice {
    private var realm: Realm?

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self, downloadBeforeOpen: .always)
    }

    func add(_ rows: ArraySlice<TaskRow>) throws {
        let realm = realm!
        try realm.write { for row in rows { realm.add(BenchTask(row)) } }
    }

    /// The unsynced changes: new Tasks, a changed owner, deleted Tasks, in one write each.
    func change(created: [TaskRow], updated: [TaskRow], deleted: [TaskRow]) throws {
        let realm = realm!
        try realm.write { for row in created { realm.add(BenchTask(row)) } }
        try realm.write {
            for row in updated { realm.object(ofType: BenchTask.self, forPrimaryKey: row.preparedId)?.owner = "recovered" }
        }
        try realm.write {
            for row in deleted {
                if let task = realm.object(ofType: BenchTask.self, forPrimaryKey: row.preparedId) { realm.delete(task) }
            }
        }
    }

    func wait(for direction: SyncSession.ProgressDirection) async throws { try await realm!.syncSession!.wait(for: direction) }
    func suspend() throws { realm!.syncSession!.suspend() }
    func resume() { realm!.syncSession!.resume() }
    var count: Int {
        realm!.refresh()
        return realm!.objects(BenchTask.self).count
    }
    func close() { realm = nil }
}
