import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the load tests run their parts on a machine of few cores, so that one measures the
/// server and not the test's own clients: the server in a child process on a core of its own,
/// the test's clients on the others, and a load-generating client's thread at the lowest
/// priority there (as if on another machine). Linux only; elsewhere nothing moves.
enum CPUPlacement {
    /// Cores of this machine, or nil where placement is not available.
    static var cores: Int? {
        #if os(Linux)
        let count = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return count >= 2 ? count : nil
        #else
        return nil
        #endif
    }

    /// Pins every thread of process `pid` (threads it starts later inherit it) to `cpus`.
    @discardableResult
    static func pin(process pid: Int32, to cpus: [Int]) -> Bool {
        #if os(Linux)
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return false }
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { bytes in
            for cpu in cpus where cpu / 8 < bytes.count { bytes[cpu / 8] |= UInt8(1 << (cpu % 8)) }
        }
        // sched_setaffinity is a GNU extension Swift's Glibc module does not declare.
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return false }
        let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
        var all = true
        for thread in threads.compactMap({ Int32($0) }) {
            let result = withUnsafeBytes(of: &set) { setAffinity(thread, $0.count, $0.baseAddress!) }
            if result != 0 { all = false }
        }
        return all
        #else
        return false
        #endif
    }

    /// Gives the calling thread the lowest scheduling priority.
    static func lowerThisThread() {
        #if os(Linux)
        typealias GetThreadID = @convention(c) () -> pid_t
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "gettid") else { return }
        let thread = unsafeBitCast(symbol, to: GetThreadID.self)()
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), 19)
        #endif
    }
}
