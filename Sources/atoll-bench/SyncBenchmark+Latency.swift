import Atoll
import AtollTesting
import Foundation

/// W4: device A writes one object; device B, which has the same partition open, gets a results
/// notification. Each write waits for B's notification before the next, so each sample is one
/// full path: A's commit → A's session uploads → the server integrates and fans out → B's session
/// downloads and commits → B's realm refreshes and calls the observer.
///
/// The time runs from just before A's `write` (so A's local commit is included) to the start of
/// B's callback. Meanwhile `idle` other devices (each its own user and WebSocket) keep a realm of
/// their own partition open and bound.
struct LatencyBenchmark {
    let writes = SyncBenchmark.setting("ATOLL_BENCH_W4_WRITES", 1000)
    let idle = SyncBenchmark.setting("ATOLL_BENCH_W4_IDLE", 100)
    let warmup = 20
    /// The figures' name: `W4`, or `W4_nodes` with A on one node and B on another.
    var label = "W4"
    /// Two nodes on one store (A and the idle devices on the first, B on the second), or nil for
    /// a server of the benchmark's own.
    var nodes: (SyncTestServer, SyncTestServer)?

    func run() async throws {
        let server: SyncTestServer
        if let nodes { server = nodes.0 } else { server = try await SyncTestServer.start(realTime: true) }
        let serverOfB = nodes?.1 ?? server
        let idleDevices = IdleDevices()
        try await concurrently(idle, width: 16) { i in
            let device = try await BenchDevice.login(server, device: "idle-\(i)")
            try await device.open("idle-\(i)", .always)
            idleDevices.append(device)
        }

        let a = try await BenchDevice.login(server, device: "A")
        let b = try await BenchDevice.login(serverOfB, device: "B")
        try await a.open(label.lowercased(), .always)
        try await b.open(label.lowercased(), .always)
        let (notifications, continuation) = AsyncStream<(count: Int, at: UInt64)>.makeStream()
        await b.observeInsertions { count in continuation.yield((count, DispatchTime.now().uptimeNanoseconds)) }

        let rows = TaskRow.generate(warmup + writes, seed: 4)
        var latencies: [Double] = []
        var iterator = notifications.makeAsyncIterator()
        for (i, row) in rows.enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            try await a.add([row])
            var arrived: UInt64?
            while let next = await iterator.next() {
                if next.count >= i + 1 {
                    arrived = next.at
                    break
                }
            }
            guard let arrived else { throw BenchFailure("\(label): B's notifications stopped after \(i) writes") }
            if i >= warmup { latencies.append(Double(arrived - start) / 1e6) }
        }
        continuation.finish()
        let received = await b.count
        guard received == rows.count else { throw BenchFailure("\(label): B has \(received) of the \(rows.count) objects A wrote") }

        latencies.sort()
        report("atoll", "\(label)_p50", quantile(latencies, 0.50), "ms")
        report("atoll", "\(label)_p99", quantile(latencies, 0.99), "ms")
        report("atoll", "\(label)_max", latencies.last ?? .nan, "ms")
        report("atoll", "\(label)_idle_sessions", Double(idle), "sessions")
        await a.close()
        await b.close()
        for device in idleDevices.all { await device.close() }
        if nodes == nil { try await server.tearDown() }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Devices collected by concurrent tasks.
final class IdleDevices: @unchecked Sendable {
    private let lock = NSLock()
    private var devices: [BenchDevice] = []
    func append(_ device: BenchDevice) { lock.withLock { devices.append(device) } }
    var all: [BenchDevice] { lock.withLock { devices } }
}
