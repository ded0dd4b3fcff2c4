// One device for the chaos tests, in its own process so that a test can kill it with SIGKILL
// (`DeviceProcess` in AtollTesting drives it).
//
//     atoll-device <base-url> <root-directory> <app-id> <partition> [recover|discard]
//     atoll-device open-realm-file <path> <schema-version>
//
// It logs in (anonymously, or as the current user a previous run on the same root directory
// left), opens the partition's realm without waiting for a download, prints `ready`, then runs
// one command per line of stdin and answers on stdout, one line each:
//
//     write <prefix> <count> [bytes]  count transactions of one DeviceItem `<prefix>-<i>` each;
//                                     `committed <prefix>-<i>` once each commit returned
//     upload | download               waits for the session; `uploaded` / `downloaded`
//     suspend | resume                the sync session; `ok`
//     watch-download                  `progress <transferred> <transferrable>` from now on
//     count                           `count <n>`
//     dump                            `dump <name>,<name>,…` (sorted, duplicates kept)
//     quit                            exits
//
// With `ATOLL_DEVICE_DIE_MID_DOWNLOAD=<ms>` in its environment the device kills itself with
// SIGKILL (printing `dying` first) that many milliseconds after the first download progress report
// that shows part of the data applied and more to come: a kill that lands mid-download however
// fast the machine downloads. The progress notification is registered before `ready`, and the
// device prints its objects as `dump` does (`held <name>,…`) before `ready` too, since it may
// be gone before it reads a command.
//
// A failed command prints `error <description>`; a client reset prints `reset-start` and
// `reset-done <objects before> <objects after>`; sync errors print `sync-error <description>`.
import Atoll
import Foundation
import Synchronization

/// What the device writes; the tests declare the same model.
final class DeviceItem: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var payload = ""
}

/// One line to stdout, written through at once (no buffering: a kill must not lose a printed line).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
// `atoll-device open-realm-file <path> <schema-version>`: opens a file Realm wrote (converting
// it), prints `opened <object count>`, exits. ChaosTests kill it while it converts.
if arguments.count == 4, arguments[1] == "open-realm-file", let version = UInt64(arguments[3]) {
    do {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]), schemaVersion: version, objectTypes: []))
        say("opened \(realm.schema.objectSchema.reduce(0) { $0 + realm.dynamicObjects($1.className).count })")
        exit(0)
    } catch {
        say("error \(error)")
        exit(1)
    }
}
guard arguments.count >= 5 else {
    FileHandle.standardError.write(Data("usage: atoll-device <base-url> <root-directory> <app-id> <partition> [recover|discard]\n".utf8))
    exit(64)
}
let (baseURL, root, appId, partition) = (arguments[1], URL(fileURLWithPath: arguments[2], isDirectory: true), arguments[3], arguments[4])
let resetMode: ClientResetMode = switch arguments.count > 5 ? arguments[5] : "recover" {
case "discard":
    .discardUnsyncedChanges(beforeReset: { _ in say("reset-start") },
                            afterReset: { before, after in say("reset-done \(before.objects(DeviceItem.self).count) \(after.objects(DeviceItem.self).count)") })
default:
    .recoverUnsyncedChanges(beforeReset: { _ in say("reset-start") },
                            afterReset: { before, after in say("reset-done \(before.objects(DeviceItem.self).count) \(after.objects(DeviceItem.self).count)") })
}

/// stdin's lines, read on a thread of their own so that the main actor stays free.
let commands = AsyncStream<String> { continuation in
    let reader = Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    reader.start()
}

let realm: Realm
do {
    let app = App(id: appId, configuration: AppConfiguration(baseURL: baseURL, rootDirectory: root))
    app.syncManager.errorHandler = { error, _ in say("sync-error \(error)") }
    let user: User
    if let current = app.currentUser {
        user = current
        say("user \(user.id) reused")
    } else {
        user = try await app.login(credentials: .anonymous)
        say("user \(user.id) new")
    }
    var configuration = user.configuration(partitionValue: partition, clientResetMode: resetMode)
    configuration.objectTypes = [DeviceItem.self]
    realm = try await Realm(configuration: configuration, downloadBeforeOpen: .never)
} catch {
    say("error opening: \(error)")
    exit(1)
}
var dieToken: NotificationToken?
if let value = ProcessInfo.processInfo.environment["ATOLL_DEVICE_DIE_MID_DOWNLOAD"], let delay = UInt32(value) {
    let dying = Mutex(false)
    dieToken = realm.syncSession?.addProgressNotification(for: .download, mode: .reportIndefinitely) { progress in
        guard progress.transferredBytes > 0, progress.transferredBytes < progress.transferrableBytes,
              dying.withLock({ already in defer { already = true }; return !already }) else { return }
        say("dying \(progress.transferredBytes) \(progress.transferrableBytes)")
        Thread {
            usleep(delay * 1000)
            kill(getpid(), SIGKILL)
        }.start()
    }
    say("held " + realm.objects(DeviceItem.self).map(\.name).sorted().joined(separator: ","))
}
say("ready")

var progressToken: NotificationToken?
for await line in commands {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    do {
        switch command {
        case "write":
            guard words.count >= 3, let count = Int(words[2]) else { say("error write <prefix> <count> [bytes]"); continue }
            let payload = String(repeating: "x", count: words.count > 3 ? Int(words[3]) ?? 0 : 0)
            for index in 0..<count {
                let item = DeviceItem()
                item.name = "\(words[1])-\(index)"
                item.payload = payload
                try realm.write { realm.add(item) }
                say("committed \(words[1])-\(index)")
                await Task.yield()
            }
        case "upload":
            try await realm.syncSession?.wait(for: .upload)
            say("uploaded")
        case "download":
            try await realm.syncSession?.wait(for: .download)
            say("downloaded")
        case "suspend":
            realm.syncSession?.suspend()
            say("ok")
        case "resume":
            realm.syncSession?.resume()
            say("ok")
        case "watch-download":
            progressToken = realm.syncSession?.addProgressNotification(for: .download, mode: .reportIndefinitely) { progress in
                say("progress \(progress.transferredBytes) \(progress.transferrableBytes)")
            }
            say("ok")
        case "count":
            _ = realm.refresh()
            say("count \(realm.objects(DeviceItem.self).count)")
        case "dump":
            _ = realm.refresh()
            say("dump " + realm.objects(DeviceItem.self).map(\.name).sorted().joined(separator: ","))
        case "quit":
            progressToken?.invalidate()
            exit(0)
        default:
            say("error unknown command \(command)")
        }
    } catch {
        say("error \(error)")
    }
}
progressToken?.invalidate()
dieToken?.invalidate()
