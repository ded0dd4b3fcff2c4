import Foundation
import Testing

/// Runs a model-based test's random sequences: 3,000 from a random base seed (printed), or the one
/// `ATOLL_MODEL_SEED` names; records up to three failing seeds with what broke and the end of
/// their trace. `run(seed)` returns the violations (none: the sequence passed) and the trace.
func runModelSequences(_ name: String, count: Int = 3000, _ run: (UInt64) -> (violations: [String], trace: [String])) {
    let environment = ProcessInfo.processInfo.environment
    let base = environment["ATOLL_MODEL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max >> 1)
    let sequences = environment["ATOLL_MODEL_SEED"] == nil ? count : 1
    print("\(name): \(sequences) sequences from seed \(base) (ATOLL_MODEL_SEED=<seed> replays one)")
    var failures = 0
    for offset in 0..<UInt64(sequences) {
        let seed = base &+ offset
        let (violations, trace) = run(seed)
        guard !violations.isEmpty else { continue }
        failures += 1
        Issue.record("ATOLL_MODEL_SEED=\(seed): \(violations.prefix(3).joined(separator: "; ")) after \(trace.suffix(25).joined(separator: " | "))")
        if failures == 3 { break }
    }
}
