// @ObservedResults, @ObservedSectionedResults, @AsyncOpen, @AutoOpen and searchable: thin
// shells over ObservedResultsStorage, ObservedSectionedResultsStorage and AsyncOpenStorage
// (see SwiftUI+Objects.swift for how this file is compiled and checked).
#if ATOLL_SWIFTUI_STAND_IN
import Atoll
import AtollSwiftUIStandIn
#elseif canImport(SwiftUI)
import SwiftUI
#endif
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

#if ATOLL_SWIFTUI_STAND_IN || (canImport(SwiftUI) && !ATOLL_SWIFTUI_CHECK)

// MARK: @ObservedResults

/// The objects of a type in the environment's realm (or the given configuration's), filtered and
/// sorted, kept current; `$results` appends and removes in write transactions.
///
/// ```swift
/// struct ItemsView: View {
///     @ObservedResults(Item.self, where: { $0.isFavorite == true }) var items
///     var body: some View {
///         List { ForEach(items) { ItemRow(item: $0) }.onDelete(perform: $items.remove) }
///     }
/// }
/// ```
@MainActor @propertyWrapper
public struct ObservedResults<ResultType>: DynamicProperty, BoundCollection
where ResultType: _ObservedResultsValue & Identifiable {
    public typealias Element = ResultType

    @Environment(\.realmConfiguration) var configuration
    @ObservedObject private var storage: ObservedResultsStorage<ResultType>

    /// The filter, as a predicate (Apple platforms).
    public var filter: NSPredicate? {
        get { filterState }
        nonmutating set {
            filterState = newValue
            storage.filter = newValue.map { predicate in { $0.filter(_realmQueryString(predicate)) } }
        }
    }
    @State private var filterState: NSPredicate? = nil

    /// The sort.
    public var sortDescriptor: Atoll.SortDescriptor? {
        get { sortState }
        nonmutating set {
            sortState = newValue
            storage.sortDescriptors = newValue.map { [$0] } ?? []
        }
    }
    @State private var sortState: Atoll.SortDescriptor? = nil

    /// The results the view shows: a frozen snapshot, current at each update.
    public var wrappedValue: Results<ResultType> { storage.wrappedValue }

    /// `$results`: `append`, `remove`, `remove(atOffsets:)`, and the query state.
    public var projectedValue: Self { self }

    nonisolated public func update() {
        MainActor.assumeIsolated { storage.update(environment: configuration) }
    }

    fileprivate func searchText(_ text: String, keyPath: String) {
        storage.searchText(text, onKeyPath: keyPath)
    }

    private init(storage: ObservedResultsStorage<ResultType>, configuration: Realm.Configuration?, sortDescriptor: Atoll.SortDescriptor?) {
        _storage = ObservedObject(wrappedValue: storage)
        storage.configuration = configuration
        self.sortDescriptor = sortDescriptor
    }

    public init<ObjectType: ObjectBase>(_ type: ResultType.Type, configuration: Realm.Configuration? = nil, filter: NSPredicate? = nil,
                                        keyPaths: [String]? = nil, sortDescriptor: Atoll.SortDescriptor? = nil)
    where ResultType: Projection<ObjectType>, ObjectType: Object {
        self.init(storage: ObservedResultsStorage(keyPaths: keyPaths) { $0.objects(ResultType.self) },
                  configuration: configuration, sortDescriptor: sortDescriptor)
        if let filter { self.filter = filter }
    }

    public init(_ type: ResultType.Type, configuration: Realm.Configuration? = nil, filter: NSPredicate? = nil,
                keyPaths: [String]? = nil, sortDescriptor: Atoll.SortDescriptor? = nil) where ResultType: Object {
        self.init(storage: ObservedResultsStorage(keyPaths: keyPaths) { $0.objects(ResultType.self) },
                  configuration: configuration, sortDescriptor: sortDescriptor)
        if let filter { self.filter = filter }
    }

    public init(_ type: ResultType.Type, configuration: Realm.Configuration? = nil,
                where: ((Query<ResultType>) -> Query<Bool>)? = nil, keyPaths: [String]? = nil,
                sortDescriptor: Atoll.SortDescriptor? = nil) where ResultType: Object {
        self.init(storage: ObservedResultsStorage(keyPaths: keyPaths) { $0.objects(ResultType.self) },
                  configuration: configuration, sortDescriptor: sortDescriptor)
        if let `where` { self.where = `where` }
    }

    public init(_ type: ResultType.Type, keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil,
                sortDescriptor: Atoll.SortDescriptor? = nil) where ResultType: Object {
        self.init(storage: ObservedResultsStorage(keyPaths: keyPaths) { $0.objects(ResultType.self) },
                  configuration: configuration, sortDescriptor: sortDescriptor)
    }
}

extension ObservedResults where ResultType: Object {
    /// The filter, as a typed query.
    public var `where`: ((Query<ResultType>) -> Query<Bool>)? {
        get { nil }
        nonmutating set { storage.filter = newValue.map { query in { $0.where(query) } } }
    }
}

// MARK: @ObservedSectionedResults

/// The objects of a type in sections, kept current.
///
/// ```swift
/// @ObservedSectionedResults(Contact.self, sectionKeyPath: \.firstLetter) var sections
/// ```
@MainActor @propertyWrapper
public struct ObservedSectionedResults<Key: _Persistable & Hashable, ResultType>: DynamicProperty, BoundCollection
where ResultType: _ObservedResultsValue & Identifiable & Object {
    public typealias Element = ResultType

    @Environment(\.realmConfiguration) var configuration
    @ObservedObject private var storage: ObservedSectionedResultsStorage<Key, ResultType>

    public var filter: NSPredicate? {
        get { nil }
        nonmutating set { storage.results.filter = newValue.map { predicate in { $0.filter(_realmQueryString(predicate)) } } }
    }

    public var `where`: ((Query<ResultType>) -> Query<Bool>)? {
        get { nil }
        nonmutating set { storage.results.filter = newValue.map { query in { $0.where(query) } } }
    }

    public var sortDescriptors: [Atoll.SortDescriptor] {
        get { storage.sortDescriptors }
        nonmutating set { storage.sortDescriptors = newValue }
    }

    public var wrappedValue: SectionedResults<Key, ResultType> { storage.wrappedValue }
    public var projectedValue: Self { self }

    /// Deletes the objects at `offsets` of `section`.
    public func remove(atOffsets offsets: IndexSet, section: ResultsSection<Key, ResultType>) {
        let frozen = offsets.map { section[$0] }
        guard let first = frozen.first?.thaw(), let realm = first.realm else { return }
        let objects = frozen.compactMap { thaw($0, in: realm) }
        realmWrite(first) { _ in realm.delete(objects) }
    }

    nonisolated public func update() {
        MainActor.assumeIsolated { storage.results.update(environment: configuration) }
    }

    fileprivate func searchText(_ text: String, keyPath: String) {
        storage.results.searchText(text, onKeyPath: keyPath)
    }

    private init(sectionKey: @escaping (ResultType) -> Key, keyPathName: String?, sortDescriptors: [Atoll.SortDescriptor],
                 keyPaths: [String]?, configuration: Realm.Configuration?, filter: NSPredicate? = nil,
                 where: ((Query<ResultType>) -> Query<Bool>)? = nil) {
        let storage = ObservedSectionedResultsStorage(keyPaths: keyPaths, sectionKey: sectionKey, keyPathName: keyPathName) {
            $0.objects(ResultType.self)
        }
        _storage = ObservedObject(wrappedValue: storage)
        storage.results.configuration = configuration
        if let filter { self.filter = filter } else if let `where` { self.where = `where` }
        self.sortDescriptors = sortDescriptors
    }

    public init(_ type: ResultType.Type, sectionKeyPath: KeyPath<ResultType, Key>, sortDescriptors: [Atoll.SortDescriptor] = [],
                filter: NSPredicate? = nil, keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: { $0[keyPath: sectionKeyPath] }, keyPathName: _realmKeyPathName(sectionKeyPath),
                  sortDescriptors: sortDescriptors, keyPaths: keyPaths, configuration: configuration, filter: filter)
    }

    public init(_ type: ResultType.Type, sectionBlock: @escaping ((ResultType) -> Key), sortDescriptors: [Atoll.SortDescriptor] = [],
                filter: NSPredicate? = nil, keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: sectionBlock, keyPathName: nil, sortDescriptors: sortDescriptors, keyPaths: keyPaths,
                  configuration: configuration, filter: filter)
    }

    public init(_ type: ResultType.Type, sectionBlock: @escaping ((ResultType) -> Key), sortDescriptors: [Atoll.SortDescriptor] = [],
                where: ((Query<ResultType>) -> Query<Bool>)? = nil, keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: sectionBlock, keyPathName: nil, sortDescriptors: sortDescriptors, keyPaths: keyPaths,
                  configuration: configuration, where: `where`)
    }

    public init(_ type: ResultType.Type, sectionKeyPath: KeyPath<ResultType, Key>, sortDescriptors: [Atoll.SortDescriptor] = [],
                where: ((Query<ResultType>) -> Query<Bool>)? = nil, keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: { $0[keyPath: sectionKeyPath] }, keyPathName: _realmKeyPathName(sectionKeyPath),
                  sortDescriptors: sortDescriptors, keyPaths: keyPaths, configuration: configuration, where: `where`)
    }

    public init(_ type: ResultType.Type, sectionKeyPath: KeyPath<ResultType, Key>, sortDescriptors: [Atoll.SortDescriptor] = [],
                keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: { $0[keyPath: sectionKeyPath] }, keyPathName: _realmKeyPathName(sectionKeyPath),
                  sortDescriptors: sortDescriptors, keyPaths: keyPaths, configuration: configuration)
    }

    public init(_ type: ResultType.Type, sectionBlock: @escaping ((ResultType) -> Key), sortDescriptors: [Atoll.SortDescriptor],
                keyPaths: [String]? = nil, configuration: Realm.Configuration? = nil) {
        self.init(sectionKey: sectionBlock, keyPathName: nil, sortDescriptors: sortDescriptors, keyPaths: keyPaths,
                  configuration: configuration)
    }
}

// MARK: @AsyncOpen, @AutoOpen

/// Opens the current user's synced realm, downloading it first; the view switches over the
/// state (`.open(realm)` when ready). Waits for a login when no user is logged in.
///
/// ```swift
/// @AsyncOpen(appId: "my-app", timeout: 4000) var asyncOpen
/// var body: some View {
///     switch asyncOpen {
///     case .open(let realm): ItemsView().environment(\.realm, realm)
///     case .progress(let progress): ProgressView(progress)
///     case .error(let error): ErrorView(error)
///     case .connecting, .waitingForUser: ProgressView()
///     }
/// }
/// ```
@MainActor @propertyWrapper
public struct AsyncOpen: DynamicProperty {
    private var opener: RealmOpener

    /// The state as a publisher.
    public var projectedValue: Published<AsyncOpenState>.Publisher { opener.projectedValue }
    public var wrappedValue: AsyncOpenState { opener.wrappedValue }

    /// Stops opening and following the app.
    public func cancel() { opener.storage.cancel() }

    public init<Partition>(appId: String? = nil, partitionValue: Partition, configuration: Realm.Configuration? = nil,
                           timeout: UInt? = nil) where Partition: BSON {
        opener = RealmOpener(.asyncOpen, appId, _realmPartition(partitionValue), configuration, timeout)
    }

    public init(appId: String? = nil, configuration: Realm.Configuration? = nil, timeout: UInt? = nil) {
        opener = RealmOpener(.asyncOpen, appId, nil, configuration, timeout)
    }

    nonisolated public func update() {
        opener.update()
    }
}

/// `@AsyncOpen` that opens what the device has when the download cannot happen (offline).
@MainActor @propertyWrapper
public struct AutoOpen: DynamicProperty {
    private var opener: RealmOpener

    public var projectedValue: Published<AsyncOpenState>.Publisher { opener.projectedValue }
    public var wrappedValue: AsyncOpenState { opener.wrappedValue }

    public func cancel() { opener.storage.cancel() }

    public init<Partition>(appId: String? = nil, partitionValue: Partition, configuration: Realm.Configuration? = nil,
                           timeout: UInt? = nil) where Partition: BSON {
        opener = RealmOpener(.autoOpen, appId, _realmPartition(partitionValue), configuration, timeout)
    }

    public init(appId: String? = nil, configuration: Realm.Configuration? = nil, timeout: UInt? = nil) {
        opener = RealmOpener(.autoOpen, appId, nil, configuration, timeout)
    }

    nonisolated public func update() {
        opener.update()
    }
}

/// What `@AsyncOpen` and `@AutoOpen` share: the environment they read and their storage
/// (SwiftUI updates this nested dynamic property with the wrapper).
@MainActor
struct RealmOpener: DynamicProperty {
    @Environment(\.realmConfiguration) var configuration
    @Environment(\.partitionValue) var partitionValue
    @ObservedObject var storage: AsyncOpenStorage

    init(_ kind: AsyncOpenStorage.Kind, _ appId: String?, _ partitionValue: (any PartitionValueConvertible)?,
         _ configuration: Realm.Configuration?, _ timeout: UInt?) {
        _storage = ObservedObject(wrappedValue: AsyncOpenStorage(
            kind: kind, appId: appId, partitionValue: partitionValue, configuration: configuration, timeout: timeout))
    }

    var projectedValue: Published<AsyncOpenState>.Publisher { storage.$state }

    var wrappedValue: AsyncOpenState {
        storage.setUp()
        return storage.state
    }

    nonisolated func update() {
        MainActor.assumeIsolated { storage.update(partitionValue: partitionValue, configuration: configuration) }
    }
}

// MARK: searchable

extension View {
    /// SwiftUI's search field, filtering `collection` on `keyPath CONTAINS text` as the user types.
    public func searchable<T: ObjectBase>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                          placement: SearchFieldPlacement = .automatic, prompt: Text? = nil) -> some View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<T: ObjectBase>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                          placement: SearchFieldPlacement = .automatic, prompt: LocalizedStringKey) -> some View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<T: ObjectBase, S>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                             placement: SearchFieldPlacement = .automatic, prompt: S) -> some View where S: StringProtocol {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<T: ObjectBase, S>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                             placement: SearchFieldPlacement = .automatic, prompt: Text? = nil,
                                             @ViewBuilder suggestions: () -> S) -> some View where S: View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }

    public func searchable<T: ObjectBase, S>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                             placement: SearchFieldPlacement = .automatic, prompt: LocalizedStringKey,
                                             @ViewBuilder suggestions: () -> S) -> some View where S: View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }

    public func searchable<T: ObjectBase, V, S>(text: Binding<String>, collection: ObservedResults<T>, keyPath: KeyPath<T, String>,
                                                placement: SearchFieldPlacement = .automatic, prompt: S,
                                                @ViewBuilder suggestions: () -> V) -> some View where V: View, S: StringProtocol {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }

    public func searchable<Key, T: Object>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>, keyPath: KeyPath<T, String>,
                                           placement: SearchFieldPlacement = .automatic, prompt: Text? = nil) -> some View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<Key, T: Object>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>, keyPath: KeyPath<T, String>,
                                           placement: SearchFieldPlacement = .automatic, prompt: LocalizedStringKey) -> some View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<Key, T: Object, S>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>,
                                              keyPath: KeyPath<T, String>, placement: SearchFieldPlacement = .automatic,
                                              prompt: S) -> some View where S: StringProtocol {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt)
    }

    public func searchable<Key, T: Object, S>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>,
                                              keyPath: KeyPath<T, String>, placement: SearchFieldPlacement = .automatic,
                                              prompt: Text? = nil, @ViewBuilder suggestions: () -> S) -> some View where S: View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }

    public func searchable<Key, T: Object, S>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>,
                                              keyPath: KeyPath<T, String>, placement: SearchFieldPlacement = .automatic,
                                              prompt: LocalizedStringKey, @ViewBuilder suggestions: () -> S) -> some View where S: View {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }

    public func searchable<Key, T: Object, V, S>(text: Binding<String>, collection: ObservedSectionedResults<Key, T>,
                                                 keyPath: KeyPath<T, String>, placement: SearchFieldPlacement = .automatic,
                                                 prompt: S, @ViewBuilder suggestions: () -> V) -> some View
    where V: View, S: StringProtocol {
        collection.searchText(text.wrappedValue, keyPath: _realmKeyPathName(keyPath))
        return searchable(text: text, placement: placement, prompt: prompt, suggestions: suggestions)
    }
}

#endif
