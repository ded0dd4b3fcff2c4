import Atoll
import AtollTesting
import Foundation
import Testing

// A notes app in Realm's style that moves work off the main thread: a database queue with its
// own realm, asynchronous writes with completion handlers, thread-safe references and
// @ThreadSafe properties, frozen snapshots for a background exporter, and observation isolated
// to an actor.
class Note: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var pinned = false
    @Persisted var tags: List<String>
    @Persisted var attachments: Map<String, String>
}

class Notebook: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var notes: List<Note>
}

final class NoteDatabase {
    let queue = DispatchQueue(label: "com.example.notes.database")
    private var realm: Realm!
    private var token: NotificationToken?
    private(set) var observedCounts: [Int] = []

    init(configuration: Realm.Configuration) throws {
        try queue.sync {
            realm = try Realm(configuration: configuration, queue: queue)
            token = realm.objects(Note.self).observe { [weak self] change in
                switch change {
                case .initial(let notes): self?.observedCounts.append(notes.count)
                case .update(let notes, _, _, _): self?.observedCounts.append(notes.count)
                case .error(let error): fatalError("\(error)")
                }
            }
        }
    }

    func save(title: String, completion: @escaping (Error?) -> Void) {
        queue.async {
            self.realm.writeAsync({
                let note = Note()
                note.title = title
                note.tags.append("inbox")
                self.realm.add(note)
            }, onComplete: completion)
        }
    }

    func pinAll(completion: @escaping () -> Void) {
        queue.async {
            self.realm.beginAsyncWrite {
                for note in self.realm.objects(Note.self) { note.pinned = true }
                self.realm.commitAsyncWrite { _ in completion() }
            }
        }
    }

    func stop() {
        queue.sync {
            token?.invalidate()
            realm = nil
        }
    }
}

final class NotebookViewModel {
    @ThreadSafe var notebook: Notebook?
    @ThreadSafe var pinned: Results<Note>?

    init(notebook: Notebook) {
        self.notebook = notebook
        self.pinned = notebook.notes.filter("pinned == true")
    }
}

actor NoteIndexer {
    var indexedTitles: [String] = []
}

@MainActor
final class NotesScreen {
    let realm: Realm
    let indexer = NoteIndexer()
    private var token: NotificationToken?

    init(realm: Realm) { self.realm = realm }

    func startIndexing() async {
        token = await realm.objects(Note.self).observe(on: indexer) { indexer, change in
            switch change {
            case .initial(let notes), .update(let notes, _, _, _):
                indexer.indexedTitles = notes.map { $0.title }.sorted()
            case .error:
                break
            }
        }
    }

    func stopIndexing() { token?.invalidate() }
}

@Suite struct NotesThreadingApp {
    @Test func aDatabaseQueueWritesAsynchronouslyAndObservesOnItsQueue() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [Note.self, Notebook.self])
        let database = try NoteDatabase(configuration: configuration)
        let saved = Recorder<String>()
        database.save(title: "Groceries") { error in saved.append(error == nil ? "ok" : "\(error!)") }
        database.save(title: "Ideas") { error in saved.append(error == nil ? "ok" : "\(error!)") }
        #expect(await waitUntil { saved.all.count == 2 })
        #expect(saved.all == ["ok", "ok"])
        let pinned = Recorder<Bool>()
        database.pinAll { pinned.append(true) }
        #expect(await waitUntil { pinned.all.count == 1 })
        #expect(await waitUntil { database.queue.sync { database.observedCounts.last == 2 } })

        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Note.self).filter("pinned == true").count == 2)
        database.stop()
    }

    @Test func viewModelsAndExportersHandRealmDataAcrossThreads() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [Note.self, Notebook.self])
        let realm = try Realm(configuration: configuration)
        let notebook = Notebook(value: ["name": "Work"])
        try realm.write {
            realm.add(notebook)
            notebook.notes.append(Note(value: ["title": "Plan", "pinned": true, "attachments": ["pdf": "plan.pdf"]]))
            notebook.notes.append(Note(value: ["title": "Draft"]))
        }
        let model = NotebookViewModel(notebook: notebook)
        let noteList = ThreadSafeReference(to: notebook.notes)
        let attachments = ThreadSafeReference(to: notebook.notes[0].attachments)
        let frozen = realm.freeze(notebook)

        let done = DispatchSemaphore(value: 0)
        var exported: [String] = []
        DispatchQueue.global().async {
            let background = try! Realm(configuration: configuration)
            let notes = background.resolve(noteList)!
            let files = background.resolve(attachments)!
            exported = notes.map { $0.title } + [files["pdf"]! ?? ""] + [frozen.name, model.notebook!.name]
            exported.append("\(model.pinned!.count)")
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(exported == ["Plan", "Draft", "plan.pdf", "Work", "Work", "1"])
        #expect(realm.thaw(frozen)?.notes.count == 2)
    }

    @MainActor
    @Test func anIndexerActorObservesNotes() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = folder.configuration(objectTypes: [Note.self, Notebook.self])
        let realm = try await Realm(configuration: configuration, actor: MainActor.shared)
        let screen = NotesScreen(realm: realm)
        await screen.startIndexing()
        try realm.write {
            realm.add(Note(value: ["title": "b"]))
            realm.add(Note(value: ["title": "a"]))
        }
        var titles: [String] = []
        for _ in 0..<400 {
            titles = await screen.indexer.indexedTitles
            if titles.count == 2 { break }
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
        }
        #expect(titles == ["a", "b"])
        screen.stopIndexing()
    }
}
