import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

// An app that watches its sync session the way Realm apps do: a status line fed by key-value
// observation of the connection, a logger of its own, custom headers for its gateway, and a
// "saved" callback after each upload.

final class FieldNote: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var text = ""
    @Persisted var takenAt = Date()
}

final class SyncStatusViewModel {
    private(set) var statusLine = "offline"
    private(set) var lastError: Error?
    private var connectionObservation: NSKeyValueObservation?
    private var stateObservation: NSKeyValueObservation?
    private let lock = NSLock()

    func watch(_ session: SyncSession) {
        connectionObservation = session.observe(\.connectionState, options: [.initial]) { [weak self] session, _ in
            let line: String
            if session.state == .invalid {
                line = "signed out"
            } else {
                switch session.connectionState {
            case .connected: line = "online"
            case .connecting: line = "connecting…"
                case .disconnected: line = "offline"
                @unknown default: line = "?"
                }
            }
            self?.lock.lock()
            self?.statusLine = line
            self?.lock.unlock()
        }
        stateObservation = session.observe(\.state, options: [.new]) { [weak self] _, change in
            if change.newValue == .invalid {
                self?.lock.lock()
                self?.statusLine = "signed out"
                self?.lock.unlock()
            }
        }
    }

    var status: String {
        lock.lock()
        defer { lock.unlock() }
        return statusLine
    }

    func stop() {
        connectionObservation?.invalidate()
        stateObservation?.invalidate()
    }
}

final class LogBook: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    func add(_ entry: String) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}

@Suite(.serialized) struct SyncSurfaceApp {
    @Test func aFieldNotesAppWatchesItsSessionAndSendsItsHeaders() async throws {
        try await withSyncTestServer { server in
            var configuration = AppConfiguration(baseURL: server.baseURL)
            configuration.rootDirectory = server.folder.url.appendingPathComponent("devices/field-notes")
            let app = App(id: "test-app", configuration: configuration)
            app.syncManager.customRequestHeaders = ["X-Field-Station": "rivendell"]
            app.syncManager.userAgent = "FieldNotes/2.1"
            // The app's logger, as it would install it at launch with `Logger.shared = fileLogger`
            // (not installed here: the tests of other suites share the process's logger).
            let logBook = LogBook()
            let fileLogger = Logger(function: { level, category, message in
                if level <= .warn { logBook.add("\(category.rawValue): \(message)") }
            })
            _ = fileLogger

            let user = try await app.login(credentials: .anonymous)
            var realmConfiguration = user.configuration(partitionValue: "notes")
            realmConfiguration.objectTypes = [FieldNote.self]
            let realm = try await Realm(configuration: realmConfiguration, downloadBeforeOpen: .always)
            let session = try #require(realm.syncSession)
            let viewModel = SyncStatusViewModel()
            viewModel.watch(session)
            #expect(await waitUntil(timeout: .seconds(30)) { viewModel.status == "online" })

            try realm.write {
                realm.add(FieldNote(value: ["text": "Elrond's library smells of cedar"]))
            }
            let saved = Locked<Bool?>(nil)
            session.wait(for: .upload, queue: DispatchQueue(label: "field-notes.sync")) { error in
                saved.withLock { $0 = error == nil }
            }
            #expect(await waitUntil(timeout: .seconds(30)) { saved.withLock { $0 } != nil })
            #expect(saved.withLock { $0 } == true)
            #expect(user.session(forPartitionValue: "notes") != nil)

            try await user.logOut()
            #expect(await waitUntil(timeout: .seconds(30)) { viewModel.status == "signed out" })
            #expect(session.state == .invalid)
            viewModel.stop()
        }
    }
}
