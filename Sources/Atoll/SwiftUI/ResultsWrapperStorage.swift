#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

/// What `@ObservedResults` can show: objects and projections.
public protocol _ObservedResultsValue: RealmCollectionValue {}
extension Object: _ObservedResultsValue {}
extension Projection: _ObservedResultsValue {}

/// The query behind `@ObservedResults`: its realm's configuration, the view's filter, search and
/// sort; the results are made on first read and again whenever one of those changes.
package final class ObservedResultsStorage<Element: RealmCollectionValue>: ObservableObject {
    package typealias Filter = (Results<Element>) -> Results<Element>

    package let objectWillChange: RealmResultsPublisher
    private let fetch: (Realm) -> Results<Element>
    private let keyPaths: [String]?
    private var isSetUp = false
    private var token: NotificationToken?
    private var current: Results<Element>?

    /// The configuration of the realm; `nil` until the view's environment supplies one.
    package var configuration: Realm.Configuration? { didSet { refetch() } }
    /// The filter the view set (`filter:` or `where:`).
    package var filter: Filter? { didSet { refetch() } }
    /// The sort the view set.
    package var sortDescriptors: [SortDescriptor] = [] { didSet { refetch() } }
    /// `searchable(text:collection:keyPath:)`'s filter: the key path and the text it contains.
    package private(set) var search: (keyPath: String, text: String)?

    package init(keyPaths: [String]? = nil, fetch: @escaping (Realm) -> Results<Element>) {
        self.fetch = fetch
        self.keyPaths = keyPaths
        objectWillChange = RealmResultsPublisher()
    }

    /// The live results, made on first read.
    package var value: Results<Element> {
        setUp()
        return current!
    }

    /// What the view reads: a frozen snapshot once a configuration is known (stable for
    /// SwiftUI's diffing), the live results otherwise.
    package var wrappedValue: Results<Element> {
        configuration == nil ? value : value.freeze()
    }

    /// Filters on `keyPath CONTAINS text` as the user types; empty text clears it.
    package func searchText(_ text: String, onKeyPath keyPath: String) {
        guard search?.text != text || search?.keyPath != keyPath else { return }
        search = text.isEmpty ? nil : (keyPath, text)
        refetch()
    }

    /// Takes the environment's configuration unless the wrapper was given one.
    package func update(environment configuration: Realm.Configuration) {
        if self.configuration == nil { self.configuration = configuration }
    }

    private func setUp() {
        guard !isSetUp else { return }
        isSetUp = true
        makeResults()
    }

    private func refetch() {
        guard isSetUp else { return }
        makeResults()
    }

    private func makeResults() {
        let realm: Realm
        do {
            realm = try Realm(configuration: configuration ?? .defaultConfiguration)
        } catch {
            preconditionFailure("@ObservedResults cannot open its realm: \(error)")
        }
        var results = fetch(realm)
        if let search { results = results.filter("\(search.keyPath) CONTAINS %@", search.text) }
        if let filter { results = filter(results) }
        if !sortDescriptors.isEmpty { results = results.sorted(by: sortDescriptors) }
        let changed = current != nil
        current = results
        if changed { objectWillChange.send() }
        token?.invalidate()
        let publisher = objectWillChange
        // The observation's initial call is the state just read: only updates signal.
        token = results.observe(keyPaths: keyPaths) { change in
            if case .update = change { publisher.send() }
        }
    }
}

/// The signal of a results wrapper's storage.
package final class RealmResultsPublisher: Publisher, @unchecked Sendable {
    package typealias Output = Void
    package typealias Failure = Never
    private let subject = PassthroughSubject<Void, Never>()

    package func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, S.Input == Void {
        subject.receive(subscriber: subscriber)
    }

    package func send() { subject.send() }
}

/// The query behind `@ObservedSectionedResults`: an `ObservedResultsStorage` whose results are
/// sectioned, by a key path (also the first sort) or a block (with sort descriptors).
package final class ObservedSectionedResultsStorage<Key: _Persistable & Hashable, Element: ObjectBase>: ObservableObject {
    package let results: ObservedResultsStorage<Element>
    private let sectionKey: (Element) -> Key
    private let keyPathName: String?
    private var sorts: [SortDescriptor] = []

    package var objectWillChange: RealmResultsPublisher { results.objectWillChange }

    package init(keyPaths: [String]?, sectionKey: @escaping (Element) -> Key, keyPathName: String?,
                 fetch: @escaping (Realm) -> Results<Element>) {
        results = ObservedResultsStorage(keyPaths: keyPaths, fetch: fetch)
        self.sectionKey = sectionKey
        self.keyPathName = keyPathName
    }

    /// The sort the view set; a key path's sections sort by that key path first.
    package var sortDescriptors: [SortDescriptor] {
        get { sorts }
        set {
            sorts = newValue
            var all = newValue
            if let keyPathName, !all.contains(where: { $0.keyPath == keyPathName }) {
                all.insert(SortDescriptor(keyPath: keyPathName, ascending: true), at: 0)
            }
            precondition(!all.isEmpty, "sortDescriptors must not be empty when sectioning ObservedSectionedResults with `sectionBlock`")
            results.sortDescriptors = all
        }
    }

    /// The sections the view reads: frozen once a configuration is known.
    package var wrappedValue: SectionedResults<Key, Element> {
        let live = results.value
        let source = results.configuration == nil ? live : live.freeze()
        return SectionedResults(results: source, key: sectionKey)
    }
}
