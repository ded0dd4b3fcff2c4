@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Testing

/// The small model the chaos tests write: a list so that concurrent appends are merged.
final class ChaosItem: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    /// The id of the write that created it.
    @Persisted var origin = ""
    @Persisted var value = 0
    /// The id of every write that updated it, appended once each.
    @Persisted var tags: List<String>
}


enum ChaosSettings {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `ATOLL_CHAOS_SEED`, or a fresh one (printed, to replay a failure).
    static let seed: UInt64 = environment["ATOLL_CHAOS_SEED"].flatMap { UInt64($0) } ?? .random(in: 0 ... .max)

    /// `ATOLL_CHAOS_SECONDS` of faults and writes; short by default so the suite stays quick.
    static let seconds: Int = environment["ATOLL_CHAOS_SECONDS"].flatMap { Int($0) } ?? 6

    /// The time limit of a chaos test: its faults plus a few minutes to converge and tear down.
    static var timeLimitMinutes: Int { seconds / 60 + 4 }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out: \(what)" }
}

/// The result of `body`, or `TimedOut` once `timeout` passes (the body is cancelled).
func bounded<T: Sendable>(_ timeout: Duration, _ what: String = "a sync wait",
                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// One object per line, sorted: what replicas must agree on.
func canonicalDump(_ realm: Realm) -> [String] {
    realm.objects(ChaosItem.self)
        .map { "\($0._id) \($0.origin) value=\($0.value) tags=[\($0.tags.joined(separator: ","))]" }
        .sorted()
}

/// The lines where two dumps differ, for a failure message.
func differences(_ a: [String], _ b: [String], limit: Int = 6) -> String {
    let onlyA = Set(a).subtracting(b).sorted().prefix(limit)
    let onlyB = Set(b).subtracting(a).sorted().prefix(limit)
    return "only in first: \(Array(onlyA)); only in second: \(Array(onlyB))"
}

/// Every write a test made, and which ones a client saw acknowledged by the server.
@MainActor final class WriteLedger {
    enum Kind { case create, update, delete }
    struct Write {
        let id: String
        let client: Int
        let kind: Kind
        let object: ObjectId
    }

    private(set) var writes: [Write] = []
    private(set) var acknowledged: Set<String> = []

    func record(_ write: Write) { writes.append(write) }
    func acknowledge(_ id: String) { acknowledged.insert(id) }

    /// Objects some recorded write deleted (anywhere, any time: erase beats concurrent changes).
    var deleted: Set<ObjectId> { Set(writes.filter { $0.kind == .delete }.map(\.object)) }

    struct Verdict {
        var checked = 0
        var lost: [String] = []
        var duplicated: [String] = []
    }

    /// Checks the writes in `ids` against a replica: each one's effect is there (unless its object
    /// was deleted), and no write appears twice.
    func verify(_ ids: Set<String>, against realm: Realm) -> Verdict {
        var verdict = Verdict()
        let items = Dictionary(uniqueKeysWithValues: realm.objects(ChaosItem.self).map { ($0._id, $0) })
        let deleted = deleted
        for write in writes where ids.contains(write.id) {
            verdict.checked += 1
            let item = items[write.object]
            switch write.kind {
            case .create:
                if !deleted.contains(write.object) && item?.origin != write.id { verdict.lost.append(write.id) }
            case .update:
                if !deleted.contains(write.object) && !(item?.tags.contains(write.id) ?? false) { verdict.lost.append(write.id) }
            case .delete:
                if item != nil { verdict.lost.append(write.id) }
            }
        }
        var seen: [String: Int] = [:]
        for item in items.values {
            seen[item.origin, default: 0] += 1
            for tag in item.tags { seen[tag, default: 0] += 1 }
        }
        verdict.duplicated = seen.filter { $0.value > 1 }.map(\.key).sorted()
        return verdict
    }
}

/// Creates, updates or deletes a random `ChaosItem` on `realm` and records it as `id`.
@MainActor func randomWrite(on realm: Realm, client: Int, id: String, ledger: WriteLedger,
                            using rng: inout SeededRandom) throws {
    let items = Array(realm.objects(ChaosItem.self))
    let roll = Double.random(in: 0..<1, using: &rng)
    if items.count < 3 || roll < 0.45 {
        let item = ChaosItem()
        item._id = ObjectId.generate()
        item.origin = id
        item.value = Int.random(in: 0..<1000, using: &rng)
        try realm.write { realm.add(item) }
        ledger.record(.init(id: id, client: client, kind: .create, object: item._id))
    } else {
        let item = items.sorted { "\($0._id)" < "\($1._id)" }[Int.random(in: 0..<items.count, using: &rng)]
        let object = item._id
        // The write starts from the newest version: a download may have deleted the item since it
        // was read. Changing a deleted object fails the write (as in Realm), so look first.
        if roll < 0.85 {
            let value = Int.random(in: 0..<1000, using: &rng)
            var changed = false
            try realm.write {
                guard !item.isInvalidated else { return }
                item.value = value
                item.tags.append(id)
                changed = true
            }
            if changed { ledger.record(.init(id: id, client: client, kind: .update, object: object)) }
        } else {
            var deleted = false
            try realm.write {
                guard !item.isInvalidated else { return }
                realm.delete(item)
                deleted = true
            }
            if deleted { ledger.record(.init(id: id, client: client, kind: .delete, object: object)) }
        }
    }
}

/// Starts a session again if an error stopped it, as an app's error handler would: to the peer a
/// duplicated, reordered or missing frame is a protocol violation (`badFrame`), which stops the
/// session until it is restarted (docs/protocol.md §2.7). Returns whether it had stopped.
@MainActor @discardableResult func restartIfStopped(_ realm: Realm) -> Bool {
    guard let session = realm.syncSession, session.state == .inactive else { return false }
    session.resume()
    return true
}

/// Uploads and downloads everything on every realm, twice over (so that each has what the others
/// uploaded), restarting sessions an error stopped. Returns how many it restarted; throws
/// `TimedOut` once `timeout` passes.
@MainActor func syncAll(_ realms: [Realm], within timeout: Duration) async throws -> Int {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var restarts = 0
    func wait(_ realm: Realm, _ direction: SyncSession.ProgressDirection) async throws {
        while true {
            if restartIfStopped(realm) { restarts += 1 }
            guard let session = realm.syncSession else { throw TimedOut(what: "a realm without a sync session") }
            do {
                try await bounded(deadline - clock.now, "\(direction) of every change") { try await session.wait(for: direction) }
                return
            } catch let error as TimedOut {
                // Say where the session stood: a stall is otherwise hard to tell from a slow machine.
                throw TimedOut(what: "\(error.what); the session: \(await session.diagnosticDescription())")
            } catch {
                // The session stopped (its waits fail): start it again and wait again.
                guard clock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
    for _ in 0..<2 {
        for realm in realms { try await wait(realm, .upload) }
        for realm in realms {
            try await wait(realm, .download)
            realm.refresh()
        }
    }
    return restarts
}

/// The app of `device` in a chaos test: its files in its own folder under `folder`, talking to
/// `baseURL`.
func chaosApp(_ appID: String, device: String, baseURL: String, in folder: TemporaryFolder) -> App {
    App(id: appID, configuration: AppConfiguration(
        baseURL: baseURL, rootDirectory: folder.url.appendingPathComponent("devices/\(device)", isDirectory: true)))
}

/// `user`'s realm of ``ChaosItem``s in partition `partition`.
@MainActor func openChaosRealm(_ user: User, partition: String, _ behavior: Realm.OpenBehavior = .never) async throws -> Realm {
    var configuration = user.configuration(partitionValue: partition)
    configuration.objectTypes = [ChaosItem.self]
    return try await Realm(configuration: configuration, downloadBeforeOpen: behavior)
}

/// The clients make `steps` random writes in turn, 10 ms apart, each recorded in `ledger` and
/// acknowledged there when its upload finishes within 3 s; `fault` runs right after write
/// `faultStep`. Returns once every acknowledgement wait has ended.
@MainActor func writeInTurns(_ realms: [Realm], ledger: WriteLedger, steps: Int = 80, faultAfter faultStep: Int,
                             _ fault: () async throws -> Void) async throws {
    var rng = SeededRandom(seed: ChaosSettings.seed)
    var acknowledgements: [Task<Void, Never>] = []
    for step in 0..<steps {
        let client = step % realms.count
        let id = "c\(client)-w\(step)"
        try randomWrite(on: realms[client], client: client, id: id, ledger: ledger, using: &rng)
        let session = try #require(realms[client].syncSession)
        acknowledgements.append(Task { @MainActor in
            if (try? await bounded(.seconds(3), "upload of \(id)") { try await session.wait(for: .upload) }) != nil {
                ledger.acknowledge(id)
            }
        })
        if step == faultStep { try await fault() }
        try await Task.sleep(for: .milliseconds(10))
    }
    for task in acknowledgements { await task.value }
}
