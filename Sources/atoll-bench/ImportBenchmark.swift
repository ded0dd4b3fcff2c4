import AtollAdminClient
import AtollCore
import AtollTesting
import Foundation

/// W10: `atoll data import` of 100,000 Task documents (mongoexport's relaxed Extended JSON, one a
/// line, every construct the import types) into an in-process server on loopback, through the
/// admin API in batches of 2,000: documents/s, and the peak memory above the process's resident
/// size before it (Linux `VmHWM`). Environment: `ATOLL_BENCH_W10_COUNT` (100,000).
struct ImportBenchmark {
    let count = SyncBenchmark.setting("ATOLL_BENCH_W10_COUNT", 100_000)

    static let schema = [
        ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .objectId, isPrimaryKey: true),
            Property(name: "title", type: .string), Property(name: "priority", type: .int), Property(name: "big", type: .int),
            Property(name: "estimate", type: .double), Property(name: "price", type: .decimal128),
            Property(name: "due", type: .date, isOptional: true), Property(name: "tag", type: .UUID, isOptional: true),
            Property(name: "tags", type: .string, collection: .list),
            Property(name: "address", type: .object, objectType: "Address"),
        ]),
        ObjectSchema(name: "Address", properties: [Property(name: "street", type: .string), Property(name: "city", type: .string)], isEmbedded: true),
    ]

    func run() async throws {
        let folder = try TemporaryFolder("atoll-bench-w10")
        let file = folder.url.appendingPathComponent("tasks.json")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        var chunk: [String] = []
        for n in 0..<count {
            chunk.append(MongoExportGenerator.task(n, format: .relaxed))
            if chunk.count == 10_000 || n == count - 1 {
                handle.write(MongoExportGenerator.file(chunk))
                chunk = []
            }
        }
        try handle.close()

        let server = try await SyncTestServer.start(appId: "bench", realTime: true)
        var run = DataImportRun(client: server.admin, app: "bench", type: "Task", file: file)
        run.schema = try JSONEncoder().encode(Self.schema)
        run.batchSize = 2_000
        let before = RealmFileBenchmark.residentKiB()
        RealmFileBenchmark.resetPeak()
        var result = DataImportReport()
        let cpuBefore = Self.processCPUSeconds()
        let time = try await measureAsync { result = try await run.run() }
        let cpu = Self.processCPUSeconds() - cpuBefore
        let peak = RealmFileBenchmark.peakKiB() - before
        try await server.tearDown()
        guard result.imported == count, result.refusedCount == 0 else {
            throw RawSQLite.Failure(description: "W10 imported \(result.imported) of \(count) (\(result.refusedCount) refused)")
        }
        report("atoll", "W10", Double(count) / time, "docs/s")
        if peak > 0 { report("atoll", "W10_peak_rss_above_baseline", Double(peak) / 1024, "MiB") }
        // CPU the process spent (client, server and store, both cores) per document: what the
        // figure would be on one idle core, whatever else the machine runs.
        report("atoll", "W10_cpu_per_document", cpu / Double(count) * 1e6, "us")
        report("atoll", "W10_documents_per_cpu_second", Double(count) / cpu, "docs/s")
    }

    /// CPU time of the whole process so far, all its threads (`CLOCK_PROCESS_CPUTIME_ID`).
    static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
