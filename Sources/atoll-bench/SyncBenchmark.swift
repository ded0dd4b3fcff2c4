import Atoll
import AtollServer
import AtollTesting
import Foundation

/// W4, W5 and W7 of sync: a real server in this process on 127.0.0.1 (`SyncTestServer`), apps
/// standing in for devices, everything over loopback.
///
/// - W4: device A writes one object, device B's results notification fires; sequential writes with
///   idle sessions connected; p50/p99 of the time from A's write to B's callback.
/// - W5: the server holds 100,000 Tasks; seconds until a fresh device's `.always` open returns.
/// - W7: idle sessions held by one server process and its memory per session; the clients run in a
///   child process so the server's resident memory is measured on its own.
///
/// Every workload has a time budget; when it runs out the bench says so and exits. W7 runs first.
/// Environment: `ATOLL_BENCH_ONLY=W4|W5|W7`, `ATOLL_BENCH_W4_WRITES` (1000), `ATOLL_BENCH_W4_IDLE`
/// (100), `ATOLL_BENCH_W5_OBJECTS` (100000), `ATOLL_BENCH_W7_SESSIONS` (10000),
/// `ATOLL_BENCH_W7_PER_CONNECTION` (10), `ATOLL_BENCH_W7_PER_PROCESS` (3000), `ATOLL_BENCH_W7_TRACE`
/// (each client login and open time on standard error), `ATOLL_BENCH_TIMEOUT` (seconds per workload, 600).
struct SyncBenchmark {
    static let environment = ProcessInfo.processInfo.environment
    static func setting(_ name: String, _ fallback: Int) -> Int { Int(environment[name] ?? "") ?? fallback }

    let only = environment["ATOLL_BENCH_ONLY"]
    let budget = Double(setting("ATOLL_BENCH_TIMEOUT", 600))

    func run() async throws {
        // W7 first: it measures this process's resident memory, which the other workloads'
        // freed-but-kept heap would hide.
        if only == nil || only == "W7" {
            try await bounded("W7") { try await IdleSessionsBenchmark().run() }
        }
        if only == nil || only == "W4" {
            try await bounded("W4") { try await LatencyBenchmark().run() }
        }
        if only == nil || only == "W5" {
            try await bounded("W5") { try await BootstrapBenchmark().run() }
        }
    }

    /// Runs `body`; if it has not finished within the budget, reports the timeout and exits.
    private func bounded(_ workload: String, _ body: () async throws -> Void) async throws {
        let budget = budget
        let watchdog = DispatchWorkItem {
            print("atoll \(workload)_timeout \(Int(budget)) s")
            FileHandle.standardError.write(Data("atoll-bench: \(workload) did not finish within \(Int(budget)) s; stopping\n".utf8))
            exit(3)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + budget, execute: watchdog)
        defer { watchdog.cancel() }
        do {
            try await body()
        } catch {
            // A failed workload is reported and the others still run.
            print("atoll \(workload)_failed 1 run")
            FileHandle.standardError.write(Data("atoll-bench: \(workload) failed: \(error)\n".utf8))
        }
    }
}

/// A synced Task, the same shape as the local workloads' (the class name is `Task`).
extension BenchTask {
    static var syncedTypes: [ObjectBase.Type] { [BenchTask.self] }
}

/// One device's realm, used only from this actor (the realm is confined to it, so other devices'
/// changes arrive as notifications on it without any polling).
actor BenchDevice {
    let user: User
    private var realm: Realm?
    private var token: NotificationToken?

    init(user: User) { self.user = user }

    static func login(_ server: SyncTestServer, device: String, connectTimeout: TimeInterval = 30) async throws -> BenchDevice {
        var configuration = server.appConfiguration(device: device)
        configuration.syncConnectTimeout = connectTimeout
        let app = App(id: server.appId, configuration: configuration)
        return BenchDevice(user: try await app.login(credentials: .anonymous))
    }

    func configuration(_ partition: String) -> Realm.Configuration {
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = BenchTask.syncedTypes
        return configuration
    }

    func open(_ partition: String, _ behavior: Realm.OpenBehavior) async throws {
        realm = try await Realm(configuration: configuration(partition), actor: self, downloadBeforeOpen: behavior)
    }

    /// Calls `changed(count)` on every change of the Tasks that inserts some.
    func observeInsertions(_ changed: @escaping @Sendable (Int) -> Void) {
        token = realm!.objects(BenchTask.self).observe { change in
            if case .update(let results, _, let insertions, _) = change, !insertions.isEmpty { changed(results.count) }
        }
    }

    func add(_ rows: ArraySlice<TaskRow>) throws {
        let realm = realm!
        try realm.write { for row in rows { realm.add(BenchTask(row)) } }
    }

    var count: Int { realm!.objects(BenchTask.self).count }

    func wait(for direction: SyncSession.ProgressDirection) async throws {
        try await realm!.syncSession!.wait(for: direction)
    }

    func close() {
        token?.invalidate()
        token = nil
        realm = nil
    }
}

/// Resident memory of a process in KiB, from `/proc/<pid>/status`.
func residentKiB(pid: String = "self") -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .nan }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Double(line.split(separator: " ").dropFirst().first ?? "") ?? .nan
    }
    return .nan
}

/// Runs `count` operations with at most `width` in flight.
func concurrently(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, count) {
            let i = next
            group.addTask { try await body(i) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                let i = next
                group.addTask { try await body(i) }
                next += 1
            }
        }
    }
}

/// The `p` quantile (0…1) of sorted values, nearest rank.
func quantile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
