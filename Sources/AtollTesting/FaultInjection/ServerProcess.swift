import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import AtollCore
import NIOCore
import NIOPosix

/// The built `atoll-server` executable running in a child process, in development mode on
/// 127.0.0.1: to kill it with SIGKILL mid-stream and start it again on the same data folder.
///
/// ```swift
/// let server = try await ServerProcess.start(dataDirectory: folder.url)
/// let app = App(id: "chaos", configuration: AppConfiguration(baseURL: server.baseURL))
/// await server.kill9()
/// try await server.restart()
/// await server.stop()
/// ```
///
/// The executable is looked up in `ATOLL_SERVER_EXECUTABLE`, then next to the running test binary
/// (`.build/<triple>/debug/atoll-server`). `swift build --build-tests` and `swift test` build it;
/// a test target that uses this type lists `atoll-server` among its dependencies as well.
package final class ServerProcess: Sendable {
    package let dataDirectory: URL
    /// The port it listens on: the one the kernel chose at the first start (the server is started
    /// with `--port 0` and says which it bound), kept across restarts.
    package var port: Int { boundPort.withLock { $0 } }
    package let executableURL: URL
    /// What the server writes (stdout and stderr), appended across restarts.
    package let logURL: URL
    /// `http://127.0.0.1:<port>`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    private let process = Locked<Process?>(nil)
    private let boundPort: Locked<Int>
    /// Arguments added to the server's command line (`--store postgres://…`).
    let extraArguments: [String]

    private init(dataDirectory: URL, port: Int, executableURL: URL, extraArguments: [String]) {
        self.extraArguments = extraArguments
        self.dataDirectory = dataDirectory
        boundPort = Locked(port)
        self.executableURL = executableURL
        logURL = dataDirectory.deletingLastPathComponent().appendingPathComponent("\(dataDirectory.lastPathComponent)-server.log")
    }

    /// Starts `atoll-server` on `dataDirectory` (created if needed) and `port` (one the kernel
    /// chooses when `nil`), and returns once it answers `GET /health`.
    ///
    /// The port is the one the child says it bound: a port picked here and handed to the child
    /// could be taken by another test's server in between, whose `/health` would then answer for
    /// a child that never started.
    package static func start(dataDirectory: URL, port: Int? = nil, executable: URL? = nil, arguments: [String] = [],
                             timeout: Duration = .seconds(30)) async throws -> ServerProcess {
        let executableURL = try executable ?? locateExecutable()
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let server = ServerProcess(dataDirectory: dataDirectory, port: port ?? 0, executableURL: executableURL,
                                   extraArguments: arguments)
        try await server.launch(timeout: timeout)
        return server
    }

    /// The child's process id while it runs.
    package var processIdentifier: Int32? {
        process.withLock { $0?.isRunning == true ? $0?.processIdentifier : nil }
    }

    /// Kills the server with SIGKILL (no shutdown, no flush) and waits until it is gone.
    package func kill9() async {
        await terminate(signal: SIGKILL)
    }

    /// Asks the server to stop (SIGTERM); kills it if it is still there after `grace`.
    package func stop(grace: Duration = .seconds(10)) async {
        await terminate(signal: SIGTERM, grace: grace)
        await terminate(signal: SIGKILL)
    }

    /// Starts the server again on the same data folder and port (after `kill9()` or `stop()`).
    /// Retries while the port is still held by the previous process.
    package func restart(timeout: Duration = .seconds(30)) async throws {
        await stop()
        try await launch(timeout: timeout)
    }

    // MARK: Running

    private func launch(timeout: Duration) async throws {
        if !FileManager.default.fileExists(atPath: logURL.path) {
            FileManager.default.createFile(atPath: logURL.path, contents: nil)
        }
        let deadline = ContinuousClock.now + timeout
        var lastFailure = "it did not answer GET /health"
        while ContinuousClock.now < deadline {
            let log = try FileHandle(forWritingTo: logURL)
            let logStart = log.seekToEndOfFile()
            let child = Process()
            child.executableURL = executableURL
            child.arguments = ["--host", "127.0.0.1", "--port", String(port), "--data", dataDirectory.path,
                               "--development-mode", "--log-level", "notice"] + extraArguments
            child.standardOutput = log
            child.standardError = log
            child.standardInput = FileHandle.nullDevice
            try child.run()
            let pid = child.processIdentifier
            process.withLock { $0 = child }
            try? log.close()
            // Wait until this child says it listens, then for health; a child that exits (the
            // port still taken) is started again.
            while ContinuousClock.now < deadline {
                if let bound = listeningPort(inLogFrom: logStart) {
                    boundPort.withLock { $0 = bound }
                    if await isHealthy() { return }
                }
                if !isRunning(pid) {
                    lastFailure = "it exited (see \(logURL.path))"
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            if isRunning(pid) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        await terminate(signal: SIGKILL)
        throw ServerProcessError(message: "atoll-server at \(executableURL.path) did not start on port \(port): \(lastFailure)")
    }

    /// The last `count` lines the server wrote (for a failing test's report).
    package func logTail(_ count: Int = 40) -> String {
        guard let data = FileManager.default.contents(atPath: logURL.path) else { return "(no log at \(logURL.path))" }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).suffix(count)
            .joined(separator: "\n")
    }

    /// The port in the server's "atoll-server listening" line written since `offset` of the log.
    private func listeningPort(inLogFrom offset: UInt64) -> Int? {
        guard let handle = try? FileHandle(forReadingFrom: logURL) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.readToEnd() else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.contains("atoll-server listening") {
            guard let range = line.range(of: " port=") else { continue }
            if let port = Int(line[range.upperBound...].prefix { $0.isNumber }), port > 0 { return port }
        }
        return nil
    }

    private func isRunning(_ pid: Int32) -> Bool {
        process.withLock { $0?.processIdentifier == pid && $0?.isRunning == true }
    }

    private func isHealthy() async -> Bool {
        var request = URLRequest(url: URL(string: "\(baseURL)/health")!)
        request.timeoutInterval = 1
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    private func terminate(signal: Int32, grace: Duration = .seconds(10)) async {
        guard let pid = process.withLock({ $0?.isRunning == true ? $0?.processIdentifier : nil }) else { return }
        kill(pid, signal)
        let deadline = ContinuousClock.now + grace
        while process.withLock({ $0?.isRunning == true }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    // MARK: Finding things

    /// The `atoll-server` executable: `ATOLL_SERVER_EXECUTABLE`, or the one in the folder of the
    /// running binary (or of its bundle, on macOS).
    package static func locateExecutable() throws -> URL {
        try locateBuiltExecutable(named: "atoll-server", environmentVariable: "ATOLL_SERVER_EXECUTABLE")
    }

    /// A product of this package: `environmentVariable`'s path, or `name` in the folder of the
    /// running binary (or of its bundle, on macOS).
    package static func locateBuiltExecutable(named name: String, environmentVariable: String) throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment[environmentVariable], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var folders: [URL] = []
        for binary in [CommandLine.arguments.first.map { URL(fileURLWithPath: $0) }, Bundle.main.executableURL] {
            guard var folder = binary?.resolvingSymlinksInPath().deletingLastPathComponent() else { continue }
            // Up to 3 levels: `AtollPackageTests.xctest/Contents/MacOS/` on macOS.
            for _ in 0..<4 {
                folders.append(folder)
                folder = folder.deletingLastPathComponent()
            }
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ServerProcessError(message: "no \(name) executable next to \(CommandLine.arguments.first ?? "?"): "
            + "run `swift build` first, or set \(environmentVariable)")
    }

    /// A port of 127.0.0.1 nobody listens on now.
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port
        try await channel.close()
        guard let port else { throw ServerProcessError(message: "no free port") }
        return port
    }
}

/// `atoll-server` could not be found or started.
package struct ServerProcessError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}
