import Atoll
import AtollServer
import AtollTesting
import Foundation

/// W7: how many idle sessions one server process holds, and its resident memory per session.
///
/// The server runs in this process; the clients run in a child process (this executable with the
/// hidden suite `sync-w7-clients`), so this process's VmRSS growth is the server's alone. The
/// child opens `sessions` synced realms, `perConnection` per device (one user and one WebSocket
/// per device, one partition per realm), each with `.always` so it is bound and identified before
/// it counts. It first opens a tenth of them as a warm-up; the figures are the growth from the
/// warm-up to the end divided by the sessions added in between, so one-time costs (thread pools,
/// caches, the first realm) stay out. The client realms are in-memory (`inMemoryIdentifier`), but
/// even an in-memory realm is a file in the temporary folder.
struct IdleSessionsBenchmark {
    let sessions = SyncBenchmark.setting("ATOLL_BENCH_W7_SESSIONS", 10_000)
    let perConnection = SyncBenchmark.setting("ATOLL_BENCH_W7_PER_CONNECTION", 10)
    /// Counted on 2026-11-29 (300 sessions in one child): a synced realm holds about 3.7 SQLite
    /// connections (each the database and its WAL) and the shared-memory index, 8–9 descriptors
    /// in all; with the limit of 20,000 per process here, 3,000 sessions a child ran out.
    let sessionsPerProcess = SyncBenchmark.setting("ATOLL_BENCH_W7_PER_PROCESS", 1_500)

    func run() async throws {
        // Every device connects from 127.0.0.1 here: the per-address limit, made for the
        // internet, would refuse all but 256 of the 1,000 WebSockets (and the new-user limit all
        // but 600 of the anonymous logins).
        let connections = (sessions + perConnection - 1) / perConnection
        let server = try await SyncTestServer.start(realTime: true) {
            $0.limits.connectionsPerAddress = connections + 16
            $0.limits.newUsersPerAddressPerHour = connections + 16
        }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        // The clients' files (their metadata stores and the files behind in-memory realms) go to
        // tmpfs when there is one: on this machine's disk each client commit's fdatasync takes
        // 3–8 ms and blocks one of the two cooperative threads, so the clients, not the server,
        // would set the pace. The server's own data stays on disk.
        let clientRoot = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let clientFolder = URL(fileURLWithPath: clientRoot).appendingPathComponent("atoll-w7-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: clientFolder) }
        try FileManager.default.createDirectory(at: clientFolder.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let processes = max(1, (sessions + sessionsPerProcess - 1) / sessionsPerProcess)
        var children: [(process: Process, input: Pipe, lines: AsyncStream<String>)] = []
        for j in 0..<processes {
            let share = sessions / processes + (j < sessions % processes ? 1 : 0)
            let child = Process()
            child.executableURL = URL(fileURLWithPath: executable)
            child.arguments = ["sync-w7-clients"]
            var environment = ProcessInfo.processInfo.environment
            environment["ATOLL_W7_URL"] = server.baseURL
            environment["ATOLL_W7_APP"] = server.appId
            environment["ATOLL_W7_PREFIX"] = "c\(j)-"
            environment["TMPDIR"] = clientFolder.appendingPathComponent("tmp").path
            environment["ATOLL_W7_FOLDER"] = clientFolder.appendingPathComponent("devices").path
            environment["ATOLL_BENCH_W7_SESSIONS"] = String(share)
            environment["ATOLL_BENCH_W7_PER_CONNECTION"] = String(perConnection)
            child.environment = environment
            let toChild = Pipe()
            let fromChild = Pipe()
            child.standardInput = toChild
            child.standardOutput = fromChild
            try child.run()
            children.append((child, toChild, Self.lines(of: fromChild.fileHandleForReading)))
        }

        func expect(_ word: String, from lines: AsyncStream<String>) async throws {
            for await line in lines {
                if line.split(separator: " ").first.map(String.init) == word { return }
                FileHandle.standardError.write(Data("atoll-bench W7 client: \(line)\n".utf8))
            }
            throw BenchFailure("W7: a client process ended before '\(word)'")
        }
        func clientsKiB() -> Double { children.map { residentKiB(pid: String($0.process.processIdentifier)) }.reduce(0, +) }

        for child in children { try await expect("warm", from: child.lines) }
        try await Task.sleep(for: .seconds(1))
        let serverWarm = residentKiB()
        let childWarm = clientsKiB()
        let sessionsWarm = serverSessions(server)
        let started = DispatchTime.now().uptimeNanoseconds
        for child in children { child.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for child in children { try await expect("ready", from: child.lines) }
        let connectSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        try await Task.sleep(for: .seconds(2))
        let serverReady = residentKiB()
        let childReady = clientsKiB()
        let sessionsReady = serverSessions(server)
        let added = sessionsReady - sessionsWarm

        let serverPer = (serverReady - serverWarm) / added
        let clientPer = (childReady - childWarm) / added
        report("atoll", "W7_sessions", sessionsReady, "sessions")
        report("atoll", "W7_server_kib_per_session", serverPer, "KiB")
        report("atoll", "W7_client_kib_per_session", clientPer, "KiB")
        report("atoll", "W7_kib_per_session", serverPer + clientPer, "KiB")
        report("atoll", "W7_server_rss", serverReady / 1024, "MiB")
        report("atoll", "W7_bind_rate", added / connectSeconds, "sessions/s")

        for child in children { try? child.input.fileHandleForWriting.close() }
        for child in children { child.process.waitUntilExit() }
        try await server.tearDown()
    }

    /// The server's own count of open sessions (its `atoll_sync_sessions_active` gauge).
    private func serverSessions(_ server: SyncTestServer) -> Double {
        for line in server.server.metrics.exposition().split(separator: "\n") where line.hasPrefix("atoll_sync_sessions_active ") {
            return Double(line.split(separator: " ").last ?? "") ?? .nan
        }
        return .nan
    }

    /// The lines a child writes, read on a thread of their own.
    private static func lines(of handle: FileHandle) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let thread = Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[(newline + 1)...])
                }
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

/// The client side of W7, run in a child process: opens the sessions and holds them until its
/// standard input closes. Prints `warm N` after the warm-up (then waits for a line on standard
/// input) and `ready N` when every session is bound.
struct IdleSessionClients {
    let environment = ProcessInfo.processInfo.environment

    func run() async throws {
        let url = environment["ATOLL_W7_URL"]!
        let appId = environment["ATOLL_W7_APP"]!
        let folder = URL(fileURLWithPath: environment["ATOLL_W7_FOLDER"]!)
        let prefix = environment["ATOLL_W7_PREFIX"] ?? ""
        let sessions = SyncBenchmark.setting("ATOLL_BENCH_W7_SESSIONS", 10_000)
        let perConnection = max(1, SyncBenchmark.setting("ATOLL_BENCH_W7_PER_CONNECTION", 10))
        let devices = (sessions + perConnection - 1) / perConnection
        let warmDevices = max(1, devices / 10)
        let input = Self.inputLines()
        let trace = environment["ATOLL_BENCH_W7_TRACE"] != nil

        @Sendable func openDevice(_ d: Int) async throws {
            var configuration = AppConfiguration(baseURL: url, rootDirectory: folder.appendingPathComponent("\(prefix)d\(d)", isDirectory: true))
            configuration.syncConnectTimeout = 300
            let t0 = DispatchTime.now().uptimeNanoseconds
            let user = try await App(id: appId, configuration: configuration).login(credentials: .anonymous)
            let t1 = DispatchTime.now().uptimeNanoseconds
            if trace { FileHandle.standardError.write(Data("TRACE login \((t1 - t0) / 1_000_000) ms\n".utf8)) }
            let count = min(perConnection, sessions - d * perConnection)
            for k in 0..<count {
                var realm = user.configuration(partitionValue: "w7-\(prefix)\(d)-\(k)")
                realm.objectTypes = BenchTask.syncedTypes
                realm.inMemoryIdentifier = "w7-\(prefix)\(d)-\(k)"
                let t2 = DispatchTime.now().uptimeNanoseconds
                _ = try await Realm(configuration: realm, downloadBeforeOpen: .always)
                if trace { FileHandle.standardError.write(Data("TRACE open \((DispatchTime.now().uptimeNanoseconds - t2) / 1_000_000) ms\n".utf8)) }
            }
        }

        try await concurrently(warmDevices, width: 32) { try await openDevice($0) }
        say("warm \(min(sessions, warmDevices * perConnection))")
        _ = await input.next()
        try await concurrently(devices - warmDevices, width: 32) { try await openDevice(warmDevices + $0) }
        say("ready \(sessions)")
        while await input.next() != nil {}
        exit(0)
    }

    /// Writes one line to the parent at once (standard output is a pipe, so `print` would buffer).
    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Standard input's lines, read on a thread of their own; `nil` at its end.
    private static func inputLines() -> LineQueue {
        let queue = LineQueue()
        let thread = Thread {
            while let line = readLine() { queue.push(line) }
            queue.push(nil)
        }
        thread.start()
        return queue
    }
}

/// Lines handed from a reading thread to async code.
final class LineQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String?] = []
    private var waiter: CheckedContinuation<String?, Never>?

    func push(_ line: String?) {
        let waiter: CheckedContinuation<String?, Never>? = lock.withLock {
            if let waiter = self.waiter {
                self.waiter = nil
                return waiter
            }
            lines.append(line)
            return nil
        }
        waiter?.resume(returning: line)
    }

    func next() async -> String? {
        await withCheckedContinuation { continuation in
            let line: String?? = lock.withLock {
                if !lines.isEmpty { return .some(lines.removeFirst()) }
                waiter = continuation
                return .none
            }
            if let line { continuation.resume(returning: line) }
        }
    }
}
