import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the generator's own process has: descriptors, memory, the clock it measures with.
package enum ProcessFacts {
    /// Nanoseconds of the monotonic clock (the schedule's and the latencies' time base).
    package static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Raises the soft descriptor limit to the hard one; returns the limit in force afterwards.
    @discardableResult
    package static func raiseDescriptorLimit() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// A line of `/proc/<pid>/status` in bytes (`VmRSS`, `VmHWM`), 0 where there is none (not Linux).
    package static func memory(_ field: String, pid: Int32? = nil) -> Int {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(field):") })
        else { return 0 }
        return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
    }

    /// Seconds of CPU (user + system) a process used so far, from `/proc/<pid>/stat`; nil off Linux.
    package static func cpuSeconds(pid: Int32? = nil) -> Double? {
        let path = pid.map { "/proc/\($0)/stat" } ?? "/proc/self/stat"
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3; utime and stime are 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The machine: cores and the 1-minute load average.
    package static func machine() -> LoadReport.Machine {
        var loads = [Double](repeating: 0, count: 3)
        let got = getloadavg(&loads, 3)
        return LoadReport.Machine(cores: ProcessInfo.processInfo.activeProcessorCount, loadAverage: got > 0 ? loads[0] : -1)
    }
}
