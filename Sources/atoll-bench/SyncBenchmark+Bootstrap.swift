import Atoll
import AtollTesting
import Foundation

/// W5: the server holds `objects` Tasks in one partition, uploaded by a loader device in
/// transactions of `batch` objects; then a fresh device (new app folder, new user, no file)
/// opens the partition with `.always`. The figure is the time of that open alone (the login
/// before it is not counted), and the open must return every object.
///
/// The baseline: the same rows inserted into a raw SQLite file in one transaction (what writing
/// them on the device costs at the least), as in W1.
struct BootstrapBenchmark {
    let objects = SyncBenchmark.setting("ATOLL_BENCH_W5_OBJECTS", 100_000)
    let batch = SyncBenchmark.setting("ATOLL_BENCH_W5_BATCH", 10_000)

    /// The figures' name: `W5`, or `W5_postgres` on a server with the PostgreSQL store.
    var label = "W5"
    /// A server to run on (the caller tears it down), or nil for one of the benchmark's own.
    var server: SyncTestServer?

    func run() async throws {
        let rows = TaskRow.generate(objects, seed: 5)
        let baseline = try rawInsert(rows)

        let server: SyncTestServer
        if let given = self.server { server = given } else { server = try await SyncTestServer.start(realTime: true) }
        let loader = try await BenchDevice.login(server, device: "loader", connectTimeout: 600)
        try await loader.open("w5", .always)
        let load = try await measureAsync {
            for start in stride(from: 0, to: rows.count, by: batch) {
                try await loader.add(rows[start..<min(start + batch, rows.count)])
            }
            try await loader.wait(for: .upload)
        }
        // `wait(for: .upload)` right after a write can return before the session has queued that
        // write (the commit reaches the session engine through a detached task), so it may cover
        // only the first transactions. Wait again once the engine has seen every commit.
        try await Task.sleep(for: .milliseconds(500))
        try await loader.wait(for: .upload)

        let fresh = try await BenchDevice.login(server, device: "fresh", connectTimeout: 600)
        let open = try await measureAsync { try await fresh.open("w5", .always) }
        let count = await fresh.count
        guard count == objects else { throw BenchFailure("\(label): the fresh device opened \(count) of \(objects) objects") }

        report("sqlite", "\(label)_insert_\(objects)", baseline, "s")
        report("atoll", "\(label)_upload_\(objects)", load, "s")
        report("atoll", label, open, "s")
        report("atoll", "\(label)_time_ratio", open / baseline, "x")
        await loader.close()
        await fresh.close()
        if self.server == nil { try await server.tearDown() }
    }

    private func rawInsert(_ rows: [TaskRow]) throws -> Double {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try RawSQLite(path: folder.appendingPathComponent("raw.sqlite").path)
        return try measure { try sqlite.insertAll(rows) }
    }
}

/// Seconds taken by an asynchronous `body`.
func measureAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
