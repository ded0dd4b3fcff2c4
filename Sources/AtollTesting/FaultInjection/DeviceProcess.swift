import AtollCore
import Foundation

/// The built `atoll-device` executable in a child process: one device with its own root
/// directory, driven by commands on its stdin, that a test can kill with SIGKILL mid-sync and
/// start again on the same folder.
///
/// ```swift
/// let device = try await DeviceProcess.start(baseURL: server.baseURL, rootDirectory: folder, appId: server.appId, partition: "p")
/// try device.send("write item 100")
/// _ = try await device.waitForLines(prefix: "committed ", count: 10)
/// await device.kill9()
/// ```
///
/// The commands and answers are described in `Sources/atoll-device/main.swift`. The executable is
/// `ATOLL_DEVICE_EXECUTABLE`, or the one next to the running test binary.
package final class DeviceProcess: Sendable {
    package let rootDirectory: URL
    /// What the device wrote to stderr.
    package let logURL: URL

    private struct State {
        var lines: [String] = []
        /// The next line `nextLine` returns.
        var cursor = 0
        var partial = Data()
        var exited = false
    }

    private let process: Process
    private let input: FileHandle
    private let state = Locked(State())

    private init(process: Process, input: FileHandle, rootDirectory: URL, logURL: URL) {
        self.process = process
        self.input = input
        self.rootDirectory = rootDirectory
        self.logURL = logURL
    }

    /// Starts a device and returns once it printed `ready` (its realm is open). `environment` is
    /// added to the test process's own (e.g. `ATOLL_DEVICE_DIE_MID_DOWNLOAD`).
    package static func start(baseURL: String, rootDirectory: URL, appId: String, partition: String,
                             resetMode: String = "recover", environment: [String: String] = [:],
                             timeout: Duration = .seconds(30)) async throws -> DeviceProcess {
        let executable = try ServerProcess.locateBuiltExecutable(named: "atoll-device", environmentVariable: "ATOLL_DEVICE_EXECUTABLE")
        try FileManager.default.createDirectory(at: rootDirectory, withIntermediateDirectories: true)
        let logURL = rootDirectory.deletingLastPathComponent().appendingPathComponent("\(rootDirectory.lastPathComponent)-device.log")
        if !FileManager.default.fileExists(atPath: logURL.path) {
            _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: logURL)
        log.seekToEndOfFile()
        let stdin = Pipe()
        let stdout = Pipe()
        let child = Process()
        child.executableURL = executable
        child.arguments = [baseURL, rootDirectory.path, appId, partition, resetMode]
        if !environment.isEmpty {
            child.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        child.standardInput = stdin
        child.standardOutput = stdout
        child.standardError = log
        // A command sent to a killed device must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        try child.run()
        try? log.close()
        let device = DeviceProcess(process: child, input: stdin.fileHandleForWriting, rootDirectory: rootDirectory, logURL: logURL)
        let output = stdout.fileHandleForReading
        Thread { device.readLoop(output) }.start()
        _ = try await device.waitForLine(timeout: timeout) { $0 == "ready" }
        return device
    }

    /// Every line the device printed so far.
    package var transcript: [String] { state.withLock { $0.lines } }

    /// How many lines the device printed so far: a mark for `lines(prefix:since:)`.
    package var lineCount: Int { state.withLock { $0.lines.count } }

    /// The lines printed so far (after the first `since`) that start with `prefix`.
    package func lines(prefix: String, since: Int = 0) -> [String] {
        state.withLock { $0.lines.dropFirst(since).filter { $0.hasPrefix(prefix) } }
    }

    /// Sends one command line.
    package func send(_ command: String) throws {
        try input.write(contentsOf: Data((command + "\n").utf8))
    }

    /// Sends `command` and returns the first line after it that `isAnswer` accepts (lines before it
    /// are skipped); an `error …` line throws.
    package func run(_ command: String, timeout: Duration = .seconds(60),
                    until isAnswer: @escaping @Sendable (String) -> Bool) async throws -> String {
        try send(command)
        return try await waitForLine(timeout: timeout) { isAnswer($0) }
    }

    /// The device's sorted object names (`dump`).
    package func dump(timeout: Duration = .seconds(30)) async throws -> [String] {
        let line = try await run("dump", timeout: timeout) { $0.hasPrefix("dump") }
        let names = line.dropFirst("dump".count).trimmingCharacters(in: .whitespaces)
        return names.isEmpty ? [] : names.split(separator: ",").map(String.init)
    }

    /// Consumes lines from the cursor on until one that `matches`; throws on an `error` line, when
    /// the device exits, or after `timeout`.
    @discardableResult
    package func waitForLine(timeout: Duration = .seconds(60), _ matches: @Sendable (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (line, exited): (String?, Bool) = state.withLock { state in
                if state.cursor < state.lines.count {
                    defer { state.cursor += 1 }
                    return (state.lines[state.cursor], state.exited)
                }
                return (nil, state.exited)
            }
            if let line {
                if matches(line) { return line }
                if line.hasPrefix("error") { throw DeviceProcessError(message: "device answered \(line)") }
                continue
            }
            if exited { throw DeviceProcessError(message: "device exited; printed \(transcript.suffix(5))") }
            if ContinuousClock.now >= deadline { throw DeviceProcessError(message: "timed out; last lines \(transcript.suffix(5))") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits until `count` lines starting with `prefix` were printed after the first `since`
    /// lines (from the start by default, not from the cursor).
    package func waitForLines(prefix: String, count: Int, since: Int = 0, timeout: Duration = .seconds(60)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = lines(prefix: prefix, since: since)
            if found.count >= count { return found }
            if state.withLock({ $0.exited }) { throw DeviceProcessError(message: "device exited after \(found.count) \(prefix)lines") }
            if ContinuousClock.now >= deadline { throw DeviceProcessError(message: "timed out after \(found.count) \(prefix)lines") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits until the device process ended by itself; false after `timeout`.
    package func waitUntilExited(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        try? input.close()
        return true
    }

    /// Kills the device with SIGKILL and waits until it is gone.
    package func kill9() async {
        await terminate(signal: SIGKILL)
    }

    /// Asks the device to quit; kills it after `grace`.
    package func stop(grace: Duration = .seconds(10)) async {
        try? send("quit")
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        await terminate(signal: SIGKILL)
    }

    private func terminate(signal: Int32) async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        while process.isRunning { try? await Task.sleep(for: .milliseconds(5)) }
        try? input.close()
    }

    private func readLoop(_ output: FileHandle) {
        while true {
            let chunk = output.availableData
            let done = chunk.isEmpty
            state.withLock { state in
                state.partial.append(chunk)
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    state.lines.append(String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self))
                    state.partial.removeSubrange(state.partial.startIndex...newline)
                }
                if done { state.exited = true }
            }
            if done { return }
        }
    }
}

/// The device process did not answer as expected.
package struct DeviceProcessError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}
