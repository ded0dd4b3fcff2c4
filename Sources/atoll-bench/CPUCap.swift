import Foundation

/// Gives a process a fixed share of CPU through the kernel, so that a node is the bottleneck of a
/// scale-out run by construction: cgroup v1's `cpu` controller (a group per node with
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us`), else `systemd-run --scope -p CPUQuota=` around the
/// process, else nothing (the run says so and is skipped).
enum CPUCap {
    case cgroupV1(URL)
    case systemdScope
    case unavailable(String)

    static let cgroupRoot = URL(fileURLWithPath: "/sys/fs/cgroup/cpu", isDirectory: true)

    /// What this machine offers.
    static func detect() -> CPUCap {
        let fileManager = FileManager.default
        let quota = cgroupRoot.appendingPathComponent("cpu.cfs_quota_us").path
        if fileManager.fileExists(atPath: quota), fileManager.isWritableFile(atPath: cgroupRoot.path) {
            return .cgroupV1(cgroupRoot)
        }
        if fileManager.fileExists(atPath: "/run/systemd/system"), fileManager.isExecutableFile(atPath: "/usr/bin/systemd-run") {
            return .systemdScope
        }
        return .unavailable("neither a writable cgroup v1 cpu controller (\(cgroupRoot.path)) nor systemd (systemd-run --scope) is here")
    }

    var description: String {
        switch self {
        case .cgroupV1(let root): "cgroup v1 cpu controller (\(root.path)/atoll-bench-node-N: cpu.cfs_quota_us / cpu.cfs_period_us)"
        case .systemdScope: "systemd-run --scope -p CPUQuota="
        case .unavailable(let why): "none: \(why)"
        }
    }

    /// For `systemdScope`: an executable that runs `server` in a scope of `cores` CPUs (the
    /// process is started through it). Nil for the other kinds (they cap a running process).
    func wrapper(for server: URL, cores: Double, in folder: URL) throws -> URL? {
        guard case .systemdScope = self else { return nil }
        let script = folder.appendingPathComponent("capped-atoll-server")
        let percent = Int((cores * 100).rounded())
        let text = "#!/bin/sh\nexec /usr/bin/systemd-run --scope --quiet -p CPUQuota=\(percent)% -- '\(server.path)' \"$@\"\n"
        try Data(text.utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return script
    }

    /// The weight of the bench's groups against everything else on the machine (1,024 is a
    /// process's default): when other work keeps the cores busy, a node still gets its whole cap
    /// and PostgreSQL and the generator what they need, so the cap, not the neighbours, is what
    /// limits a node.
    static let benchShares = 16_384

    /// Puts the running process `pid` (every thread) in group `name` capped at `cores` CPUs (no
    /// cap when nil: only the weight).
    func cap(pid: Int32, name: String, cores: Double?) throws -> CPUGroup? {
        guard case .cgroupV1(let root) = self else { return nil }
        let group = root.appendingPathComponent(name, isDirectory: true)
        if !FileManager.default.fileExists(atPath: group.path) {
            try FileManager.default.createDirectory(at: group, withIntermediateDirectories: false)
        }
        let period = 100_000
        try write("\(period)", to: group.appendingPathComponent("cpu.cfs_period_us"))
        try write(cores.map { "\(Int(($0 * Double(period)).rounded()))" } ?? "-1", to: group.appendingPathComponent("cpu.cfs_quota_us"))
        try write("\(Self.benchShares)", to: group.appendingPathComponent("cpu.shares"))
        try write("\(pid)", to: group.appendingPathComponent("cgroup.procs"))
        return CPUGroup(folder: group)
    }

    /// Moves `pid` back to the root group (before its group is removed).
    func release(pid: Int32) {
        guard case .cgroupV1(let root) = self else { return }
        try? write("\(pid)", to: root.appendingPathComponent("cgroup.procs"))
    }

    private func write(_ text: String, to file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
    }
}

/// A cgroup v1 cpu group the bench made: its throttling counters, and its removal once empty.
struct CPUGroup {
    let folder: URL

    /// Periods in which the group hit its quota, and the total time it was held back (seconds).
    var throttling: (periods: Int, throttled: Int, seconds: Double) {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("cpu.stat"), encoding: .utf8) else { return (0, 0, 0) }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        return (fields["nr_periods"] ?? 0, fields["nr_throttled"] ?? 0, Double(fields["throttled_time"] ?? 0) / 1e9)
    }

    /// Removes the group (the kernel refuses while a process is still in it).
    func remove() { rmdir(folder.path) }
}
