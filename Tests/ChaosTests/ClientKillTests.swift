import Atoll
import AtollTesting
import Foundation
import Testing

/// What `atoll-device` writes: the same class name and properties, so that in-process realms of
/// the partition share its schema.
final class DeviceItem: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var payload = ""
}

/// A client (`atoll-device`, a child process) killed with SIGKILL mid-upload, mid-download and
/// mid-client-reset, then started again on the same folder: the file opens, nothing it printed as
/// committed is lost, and the next sync converges with the server.
@MainActor @Suite(.serialized) struct ClientKillTests {
    /// The devices a test started, killed whatever happens.
    @MainActor final class Fleet {
        let server: SyncTestServer
        let partition: String
        private(set) var started: [DeviceProcess] = []
        private var witnesses = 0

        init(_ server: SyncTestServer, partition: String) {
            self.server = server
            self.partition = partition
        }

        func start(_ name: String, resetMode: String = "recover", environment: [String: String] = [:]) async throws -> DeviceProcess {
            let device = try await DeviceProcess.start(
                baseURL: server.baseURL, rootDirectory: server.folder.url.appendingPathComponent("devices/\(name)", isDirectory: true),
                appId: server.appId, partition: partition, resetMode: resetMode, environment: environment)
            started.append(device)
            return device
        }

        /// The server's objects, as a fresh in-process device downloads them.
        func serverNames() async throws -> [String] {
            witnesses += 1
            let user = try await server.app(device: "witness-\(witnesses)").login(credentials: .anonymous)
            var configuration = user.configuration(partitionValue: partition)
            configuration.objectTypes = [DeviceItem.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            defer { realm.syncSession?.suspend() }
            return realm.objects(DeviceItem.self).map(\.name).sorted()
        }

        func killAll() async {
            for device in started { await device.kill9() }
        }
    }

    /// Runs `body` with a server and a fleet; the devices are killed before the server goes.
    private func withFleet(partition: String, _ body: (Fleet) async throws -> Void) async throws {
        try await withSyncTestServer { server in
            let fleet = Fleet(server, partition: partition)
            do {
                try await body(fleet)
            } catch {
                await fleet.killAll()
                print("\(partition) failed; ATOLL_CHAOS_SEED=\(ChaosSettings.seed) replays its random choices")
                throw error
            }
            await fleet.killAll()
        }
    }

    /// The names printed in `committed <name>` lines.
    private func committed(_ device: DeviceProcess) -> [String] {
        device.lines(prefix: "committed ").map { String($0.dropFirst("committed ".count)) }
    }

    private func duplicates(_ names: [String]) -> [String] {
        Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
    }

    @Test(.timeLimit(.minutes(3)))
    func aClientKilledMidUploadKeepsEveryCommittedObjectAndUploadsItOnce() async throws {
        var rng = SeededRandom(seed: ChaosSettings.seed)
        try await withFleet(partition: "kill-upload") { fleet in
            var announced: [String] = []
            // What the server held right after each kill, of what the device had printed as committed.
            var serverAtKill: [(held: Int, committed: Int)] = []
            let rounds = 8
            for round in 0..<rounds {
                let device = try await fleet.start("phone")
                if round > 0 {
                    #expect(device.lines(prefix: "user ").first?.hasSuffix("reused") == true, "\(device.transcript)")
                    let names = try await device.dump()
                    let lost = Set(announced).subtracting(names)
                    #expect(lost.isEmpty, "round \(round): committed before kill -9 but missing after reopening: \(lost.sorted())")
                    #expect(duplicates(names).isEmpty, "round \(round): twice in the file: \(duplicates(names))")
                }
                // 2 KB each: the upload of one commit is still in flight when the next commits.
                try device.send("write r\(round) 400 2000")
                let killAfter = Int.random(in: 5...80, using: &rng)
                _ = try await device.waitForLines(prefix: "committed r\(round)-", count: killAfter)
                await device.kill9()
                announced += committed(device)
                serverAtKill.append((try await fleet.serverNames().count, announced.count))
            }
            // The kills came mid-upload: the server lacked some committed objects at least once.
            #expect(serverAtKill.contains { $0.held < $0.committed }, "\(serverAtKill)")

            let device = try await fleet.start("phone")
            let local = try await device.dump()
            let lost = Set(announced).subtracting(local)
            #expect(lost.isEmpty, "committed before kill -9 but missing: \(lost.sorted())")
            #expect(duplicates(local).isEmpty)
            // Each round's objects are a prefix of what it wrote: no commit lost between two kept ones.
            for round in 0..<rounds {
                let kept = local.filter { $0.hasPrefix("r\(round)-") }
                #expect(Set(kept) == Set((0..<kept.count).map { "r\(round)-\($0)" }), "round \(round) has a gap: \(kept.count) objects")
            }
            try await device.run("upload") { $0 == "uploaded" }
            let onServer = try await fleet.serverNames()
            #expect(onServer == local, "\(Set(local).symmetricDifference(onServer).sorted().prefix(10))")
            #expect(duplicates(onServer).isEmpty, "uploaded twice: \(duplicates(onServer))")
            print("client kill -9 mid-upload: \(rounds) kills, \(announced.count) committed lines "
                + "(on the server at each kill: \(serverAtKill.map { "\($0.held)/\($0.committed)" })), \(local.count) objects kept and "
                + "\(onServer.count) on the server; lost \(lost.count), duplicated \(duplicates(onServer).count)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aClientKilledMidDownloadOpensAndDownloadsExactlyTheServersData() async throws {
        var rng = SeededRandom(seed: ChaosSettings.seed &+ 1)
        try await withFleet(partition: "kill-download") { fleet in
            // 6,000 objects of 1.5 KB (9 MB) in 120 transactions, uploaded by an in-process device.
            let writer = try await fleet.server.app(device: "writer").login(credentials: .anonymous)
            var configuration = writer.configuration(partitionValue: fleet.partition)
            configuration.objectTypes = [DeviceItem.self]
            let writerRealm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            let payload = String(repeating: "d", count: 1500)
            for batch in 0..<120 {
                try writerRealm.write {
                    for index in 0..<50 {
                        let item = DeviceItem()
                        item.name = "w-\(batch * 50 + index)"
                        item.payload = payload
                        writerRealm.add(item)
                    }
                }
            }
            try await writerRealm.syncSession!.wait(for: .upload)
            let expected = writerRealm.objects(DeviceItem.self).map(\.name).sorted()

            // Each kill comes once a download message of the partition (about 1 MB) was applied
            // and another is on its way, a little later by a random delay: the device kills itself
            // from its progress callback, so the kill lands mid-download however fast the machine.
            var kills = 0
            var heldAtRestart: [Int] = []
            for round in 0..<5 {
                let delay = Int.random(in: 0...8, using: &rng)
                let device = try await fleet.start("tablet", environment: ["ATOLL_DEVICE_DIE_MID_DOWNLOAD": "\(delay)"])
                if round > 0 {
                    // Printed before `ready`: the device may kill itself before it reads a command.
                    let held = device.lines(prefix: "held").first?.dropFirst("held".count).trimmingCharacters(in: .whitespaces) ?? ""
                    let names = held.isEmpty ? [] : held.split(separator: ",").map(String.init)
                    heldAtRestart.append(names.count)
                    #expect(Set(names).isSubset(of: expected), "round \(round): objects the server never had")
                    #expect(duplicates(names).isEmpty, "round \(round): twice in the file: \(duplicates(names))")
                }
                // A device that found nothing left to download (all of it applied before the
                // kill) does not die by itself: it is killed here.
                if await device.waitUntilExited(timeout: .seconds(20)) {
                    kills += 1
                } else {
                    await device.kill9()
                }
            }
            // The kills really came mid-download: a restart found part of the data.
            #expect(heldAtRestart.contains { $0 > 0 && $0 < expected.count }, "\(heldAtRestart)")

            let device = try await fleet.start("tablet")
            try await device.run("download") { $0 == "downloaded" }
            let local = try await device.dump()
            #expect(local == expected, "\(Set(local).symmetricDifference(expected).sorted().prefix(10)) of \(expected.count)")
            #expect(duplicates(local).isEmpty)
            #expect(try await fleet.serverNames() == expected)
            print("client kill -9 mid-download: \(kills) kills, objects held at each restart \(heldAtRestart), "
                + "\(expected.count) objects expected, \(local.count) after restart; "
                + "missing \(Set(expected).subtracting(local).count), duplicated \(duplicates(local).count)")
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func aClientKilledMidClientResetRecoversEveryCommittedObjectAndConverges() async throws {
        var rng = SeededRandom(seed: ChaosSettings.seed &+ 2)
        try await withFleet(partition: "kill-reset") { fleet in
            let server = fleet.server
            var announced: [String] = []
            // Where each kill landed: before the reset began (connecting, downloading the fresh
            // copy), during its write, or after it.
            var landed: [String] = []
            // 2 MB on the server: a reset's fresh copy takes a while to download, a window to die in.
            let writer = try await server.app(device: "writer").login(credentials: .anonymous)
            var configuration = writer.configuration(partitionValue: fleet.partition)
            configuration.objectTypes = [DeviceItem.self]
            let writerRealm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
            try writerRealm.write {
                for index in 0..<2000 {
                    let item = DeviceItem()
                    item.name = "server-\(index)"
                    item.payload = String(repeating: "s", count: 1000)
                    writerRealm.add(item)
                }
            }
            try await writerRealm.syncSession!.wait(for: .upload)
            writerRealm.syncSession!.suspend()

            var device = try await fleet.start("laptop", resetMode: "recover")
            try device.send("write base 5")
            _ = try await device.waitForLines(prefix: "committed base-", count: 5)
            try await device.run("upload") { $0 == "uploaded" }
            try await device.run("download") { $0 == "downloaded" }

            // Half the kills come a delay after reconnecting, half a delay after the reset began.
            // The fresh copy downloads between the two; the reset's write runs after reset-start.
            let delays: [(afterResetStart: Bool, delay: Int)] = (0..<4).map { _ in (false, Int.random(in: 0...60, using: &rng)) }
                + [0, 0, 2, 5].map { (true, $0) }
            for (round, (afterResetStart, delay)) in delays.enumerated() {
                // Offline commits, then the server forgets the client's history.
                try await device.run("suspend") { $0 == "ok" }
                try device.send("write offline\(round) 10")
                _ = try await device.waitForLines(prefix: "committed offline\(round)-", count: 10)
                try await server.admin.terminateSync(app: server.appId)
                try await server.admin.enableSync(app: server.appId)
                // Reconnecting starts the reset; the device dies while it runs.
                let mark = device.lineCount
                try device.send("resume")
                if afterResetStart { _ = try? await device.waitForLines(prefix: "reset-start", count: 1, since: mark, timeout: .seconds(10)) }
                try await Task.sleep(for: .milliseconds(delay))
                await device.kill9()
                announced += committed(device)
                landed.append(device.lines(prefix: "reset-start", since: mark).isEmpty ? "before"
                    : device.lines(prefix: "reset-done", since: mark).isEmpty ? "during" : "after")

                device = try await fleet.start("laptop", resetMode: "recover")
                let names = try await device.dump()
                let lost = Set(announced).subtracting(names)
                #expect(lost.isEmpty, "round \(round) (kill after \(delay) ms): committed but missing on reopening: \(lost.sorted())")
                #expect(duplicates(names).isEmpty, "round \(round): twice in the file: \(duplicates(names))")
                try await device.run("upload") { $0 == "uploaded" }
                try await device.run("download") { $0 == "downloaded" }
            }

            // Some kill came before the reset finished (the test would prove nothing otherwise).
            #expect(landed.contains { $0 != "after" }, "\(landed)")
            let local = try await device.dump()
            let lost = Set(announced).subtracting(local)
            #expect(lost.isEmpty, "committed but lost across the resets: \(lost.sorted())")
            #expect(duplicates(local).isEmpty, "recovered twice: \(duplicates(local))")
            let onServer = try await fleet.serverNames()
            #expect(onServer == local, "\(Set(local).symmetricDifference(onServer).sorted().prefix(10))")
            print("client kill -9 mid-client-reset: \(delays.count) kills at \(delays.map { "\($0.1) ms after \($0.0 ? "reset-start" : "resume")" }), "
                + "landing \(landed) the reset; \(Set(announced).count) committed, \(local.count) on the device and \(onServer.count) on the server; "
                + "lost \(lost.count), duplicated \(duplicates(onServer).count)")
        }
    }
}
