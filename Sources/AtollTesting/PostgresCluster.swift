import Foundation
import Logging
import PostgresNIO

/// A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a temporary folder,
/// `postgres` listening on 127.0.0.1 on a free port (and a Unix socket in the folder), trust
/// authentication for the user `atoll`; stopped and removed by ``stop()`` (the shared one when the
/// process exits).
///
/// PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` account (Debian's
/// package creates it) through `runuser`. The binaries are found in `ATOLL_POSTGRES_BIN`, then
/// Debian's `/usr/lib/postgresql/<version>/bin` (newest first), then `PATH`.
///
/// ```swift
/// let cluster = try await PostgresCluster.shared()
/// let url = try await cluster.createDatabase()   // postgres://atoll@127.0.0.1:PORT/t_…
/// ```
package final class PostgresCluster: Sendable {
    package let port: Int
    package let folder: URL
    package let binaries: URL
    package static let user = "atoll"

    init(port: Int, folder: URL, binaries: URL) {
        self.port = port
        self.folder = folder
        self.binaries = binaries
    }

    // MARK: Finding PostgreSQL

    /// The folder holding `initdb`, `pg_ctl` and `postgres`, or nil when PostgreSQL is not installed.
    package static let binaryFolder: URL? = {
        let fileManager = FileManager.default
        func holdsServer(_ folder: String) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fileManager.isExecutableFile(atPath: "\(folder)/\($0)") }
        }
        if let configured = ProcessInfo.processInfo.environment["ATOLL_POSTGRES_BIN"], holdsServer(configured) {
            return URL(fileURLWithPath: configured, isDirectory: true)
        }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: debian)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where holdsServer("\(debian)/\(version)/bin") {
            return URL(fileURLWithPath: "\(debian)/\(version)/bin", isDirectory: true)
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where holdsServer(folder) {
            return URL(fileURLWithPath: folder, isDirectory: true)
        }
        return nil
    }()

    /// Whether PostgreSQL's server binaries are installed (tests that need them are skipped, and
    /// say so, when they are not).
    package static var isAvailable: Bool { binaryFolder != nil }

    // MARK: The shared cluster

    private static let sharedCluster = SharedCluster()

    /// The process's cluster, started on first use and stopped when the process exits.
    package static func shared() async throws -> PostgresCluster {
        try await sharedCluster.get()
    }

    private actor SharedCluster {
        var starting: Task<PostgresCluster, any Error>?

        func get() async throws -> PostgresCluster {
            if let starting { return try await starting.value }
            let task = Task { try await PostgresCluster.start(fsync: false) }
            starting = task
            let cluster = try await task.value
            PostgresCluster.stopAtExit(cluster)
            return cluster
        }
    }

    nonisolated(unsafe) private static var clusterToStopAtExit: PostgresCluster?

    private static func stopAtExit(_ cluster: PostgresCluster) {
        clusterToStopAtExit = cluster
        atexit { PostgresCluster.clusterToStopAtExit?.stop() }
    }

    // MARK: Starting and stopping

    /// Starts a new cluster. `fsync: false` is for tests (faster commits; a crash of the machine
    /// may lose the cluster, which is thrown away anyway); benchmarks keep it on.
    package static func start(fsync: Bool = true, maxConnections: Int = 300) async throws -> PostgresCluster {
        guard let binaries = binaryFolder else {
            throw PostgresClusterError("PostgreSQL is not installed (no initdb, pg_ctl and postgres in ATOLL_POSTGRES_BIN, "
                + "/usr/lib/postgresql/*/bin or PATH); on Debian: apt-get install postgresql")
        }
        let asRoot = getuid() == 0
        // As root the cluster runs as `postgres`, which must reach its folder: /tmp, whatever
        // TMPDIR says (a runner's own temporary folder may be closed to other accounts).
        let base = asRoot ? URL(fileURLWithPath: "/tmp", isDirectory: true) : FileManager.default.temporaryDirectory
        await removeAbandonedClusters(in: base, binaries: binaries, asRoot: asRoot)
        let folder = base.appendingPathComponent("atoll-pg-\(UUID().uuidString.prefix(8))")
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Whose cluster this is: a later process removes it if this one died without stopping it.
        try Data("\(getpid())".utf8).write(to: folder.appendingPathComponent("owner.pid"))
        if asRoot {
            // The cluster's files belong to the account that runs it.
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder.path)
        }
        do {
            try await run(binaries.appendingPathComponent("initdb"), asRoot: asRoot, [
                "-D", data.path, "-U", user, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync",
            ])
            var lastError: (any Error)?
            for _ in 0..<5 {
                let port = try await ServerProcess.freePort()
                let options = [
                    "-p \(port)", "-k \(folder.path)", "-c listen_addresses=127.0.0.1", "-c max_connections=\(maxConnections)",
                    "-c fsync=\(fsync ? "on" : "off")", "-c synchronous_commit=\(fsync ? "on" : "off")",
                    "-c full_page_writes=\(fsync ? "on" : "off")", "-c shared_buffers=64MB",
                ].joined(separator: " ")
                do {
                    try await run(binaries.appendingPathComponent("pg_ctl"), asRoot: asRoot, [
                        "-D", data.path, "-l", folder.appendingPathComponent("server.log").path, "-o", options, "-w", "-t", "60", "start",
                    ])
                    return PostgresCluster(port: port, folder: folder, binaries: binaries)
                } catch {
                    lastError = error  // most likely the port was taken meanwhile: try another
                }
            }
            throw lastError ?? PostgresClusterError("PostgreSQL did not start")
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Stops and removes the clusters of test processes that crashed or were killed (their
    /// `owner.pid` names no live process), so they do not pile up on a developer's machine.
    private static func removeAbandonedClusters(in base: URL, binaries: URL, asRoot: Bool) async {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        for name in names where name.hasPrefix("atoll-pg-") {
            let folder = base.appendingPathComponent(name)
            guard let text = try? String(contentsOf: folder.appendingPathComponent("owner.pid"), encoding: .utf8),
                  let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                  kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? await run(binaries.appendingPathComponent("pg_ctl"), asRoot: asRoot,
                           ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Stops the server at once and removes its folder.
    package func stop() {
        let data = folder.appendingPathComponent("data")
        _ = try? Self.runNow(binaries.appendingPathComponent("pg_ctl"), asRoot: getuid() == 0,
                             ["-D", data.path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: folder)
    }

    /// The URL of `database` on this cluster.
    package func url(database: String) -> String {
        "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Creates a new, empty database and returns its URL.
    package func createDatabase(named name: String = "t_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))")
        async throws -> String
    {
        let logger = Logger(label: "atoll.test.postgres") { _ in SwiftLogNoOpLogHandler() }
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: Self.user, password: nil, database: "postgres", tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""), logger: logger)
        return url(database: name)
    }

    /// Runs `sql` on the database of `url` (made by ``createDatabase(named:)``) on a connection
    /// of its own, as another role's client would: the rows, each column cast to text by the
    /// statement (`::text`) or nil.
    @discardableResult
    package func execute(_ sql: String, onDatabaseOf url: String) async throws -> [[String?]] {
        guard let database = URLComponents(string: url)?.path.dropFirst(), !database.isEmpty else {
            throw PostgresClusterError("no database in \(url)")
        }
        let logger = Logger(label: "atoll.test.postgres") { _ in SwiftLogNoOpLogHandler() }
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: Self.user, password: nil, database: String(database), tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        return try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect().map { row in
            row.map { cell in try? cell.decode(String?.self) ?? nil }
        }
    }

    // MARK: Running the binaries

    private static func run(_ executable: URL, asRoot: Bool, _ arguments: [String]) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            // initdb and pg_ctl take a second or two: waited for off the cooperative pool.
            Thread.detachNewThread {
                do {
                    try runNow(executable, asRoot: asRoot, arguments)
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            }
        }
    }

    private static func runNow(_ executable: URL, asRoot: Bool, _ arguments: [String]) throws {
        let process = Process()
        // The program runs through a shell that first closes every descriptor but the standard
        // three: the server pg_ctl starts would otherwise keep the ones it inherited, among them
        // the socket through which Foundation learns that its child exited (it would never
        // learn it), and sockets of this process's own servers.
        let closingDescriptors = [
            "/bin/bash", "-c",
            #"for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null; exec "$@""#,
            "bash", executable.path,
        ] + arguments
        if asRoot {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--"] + closingDescriptors
        } else {
            process.executableURL = URL(fileURLWithPath: closingDescriptors[0])
            process.arguments = Array(closingDescriptors.dropFirst())
        }
        // Output goes to a file: the server's log is its own (pg_ctl -l).
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-pg-output-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
            throw PostgresClusterError("\(executable.lastPathComponent) failed (\(process.terminationStatus)): \(text.suffix(2_000))")
        }
    }
}

/// The test cluster could not be started.
package struct PostgresClusterError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
