import Atoll
import Foundation

/// W1–W3 on an encrypted realm (`encryptionKey`), so the cost of encryption at rest is measured
/// next to the plaintext figures: `atoll W1_encrypted … obj/s`, its time ratio to raw SQLite
/// (as the plaintext lines have) and `W1_encryption_cost`, its time ratio to plaintext Atoll.
extension LocalBenchmark {
    /// The workloads' times on a fresh encrypted realm, in the order and shape of `round`.
    func encryptedRound(_ rows: [TaskRow], _ extra: [TaskRow]) throws -> [String: Double] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atoll-bench-enc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("atoll.realm"), objectTypes: [BenchTask.self])
        config.encryptionKey = Data((0..<64).map { UInt8($0) })
        let realm = try Realm(configuration: config)
        var times: [String: Double] = [:]
        times["W1"] = try measure {
            try realm.write {
                for row in rows { realm.add(BenchTask(row)) }
            }
        }
        times["W2"] = try measure {
            for row in extra { try realm.write { realm.add(BenchTask(row)) } }
        }
        times["W3"] = measure {
            for _ in 0..<queryRounds {
                let results = realm.objects(BenchTask.self).where { $0.owner == "owner-7" && $0.done == false }
                var length = 0
                for task in results { length += task.name.utf8.count }
                precondition(length == results.count * 20)
            }
        }
        return times
    }

    /// Prints the encrypted figures of `workload` from the best times of each side.
    func compareEncrypted(_ workload: String, count: Double, encrypted: Double, _ time: (raw: Double, atoll: Double), unit: String) {
        report("atoll", workload + "_encrypted", count / encrypted, unit)
        report("atoll", workload + "_encrypted_time_ratio", encrypted / time.raw, "x")
        report("atoll", workload + "_encryption_cost", encrypted / time.atoll, "x")
    }
}
