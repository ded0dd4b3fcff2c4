// Realm's SwiftUI property wrappers for objects and collections: thin shells over
// RealmObjectStorage and RealmPropertyBinding (../RealmWrapperStorage.swift), which hold the
// logic. Compiled by Atoll on Apple platforms, and on Linux by SwiftUIShellTests against a
// SwiftUI stand-in (AtollSwiftUIStandIn), so a typo here fails on Linux too.
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

// MARK: Bindings

@MainActor
private func binding<T: ThreadConfined, V>(_ root: T, _ keyPath: ReferenceWritableKeyPath<T, V>,
                                           isSame: ((V, V) -> Bool)? = nil, freezeCollections: Bool = false) -> Binding<V> {
    let logic = RealmPropertyBinding(root, keyPath, isSame: isSame, freezeCollections: freezeCollections)
    return Binding(get: logic.get, set: logic.set)
}

extension Binding where Value: ObjectBase & ThreadConfined {
    /// A binding of a property of the bound object; setting it writes in a write transaction.
    @MainActor public subscript<V>(dynamicMember member: ReferenceWritableKeyPath<Value, V>) -> Binding<V> where V: _Persistable {
        binding(wrappedValue, member)
    }

    /// A binding of a list, set or map of the bound object, frozen for the view.
    @MainActor public subscript<V>(dynamicMember member: ReferenceWritableKeyPath<Value, V>) -> Binding<V>
    where V: _Persistable & RealmSubscribable & ThreadConfined & Equatable {
        binding(wrappedValue, member, freezeCollections: true)
    }

    /// A binding of a property; setting the value it has already does not write.
    @MainActor public subscript<V>(dynamicMember member: ReferenceWritableKeyPath<Value, V>) -> Binding<V> where V: _Persistable & Equatable {
        binding(wrappedValue, member, isSame: ==)
    }
}

extension Binding: BoundCollection where Value: RealmCollection {
    public typealias Element = Value.Element
}

extension Binding: BoundMap where Value: RealmKeyedCollection {}

extension Binding where Value: Object {
    /// Deletes the bound object from its realm.
    public func delete() {
        realmWrite(wrappedValue) { $0.realm?.delete($0) }
    }
}

extension Binding where Value: ProjectionObservable & ThreadConfined, Value.Root: ThreadConfined {
    /// Deletes the projected object from its realm.
    public func delete() {
        realmWrite(wrappedValue.rootObject) { $0.realm?.delete($0) }
    }
}

extension ThreadConfined where Self: ObjectBase {
    /// A binding of one property of the object.
    @MainActor public func bind<V: _Persistable & Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, V>) -> Binding<V> {
        binding(self, keyPath, isSame: ==)
    }

    @MainActor public func bind<V: _Persistable & RealmSubscribable & ThreadConfined & Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, V>) -> Binding<V> {
        binding(self, keyPath, freezeCollections: true)
    }
}

extension ThreadConfined where Self: ProjectionObservable {
    /// A binding of one property of the projection.
    @MainActor public func bind<V: _Persistable & Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, V>) -> Binding<V> {
        binding(self, keyPath, isSame: ==)
    }

    @MainActor public func bind<V: _Persistable & RealmSubscribable & ThreadConfined & Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, V>) -> Binding<V> {
        binding(self, keyPath, freezeCollections: true)
    }
}

// MARK: @StateRealmObject

/// An object or collection a view owns: kept across the view's updates, observed, and written
/// through its bindings (`$item.name`) in write transactions.
///
/// ```swift
/// struct NewItemView: View {
///     @StateRealmObject var item = Item()
///     var body: some View { TextField("Name", text: $item.name) }
/// }
/// ```
@MainActor @propertyWrapper
public struct StateRealmObject<T: RealmSubscribable & ThreadConfined & Equatable>: DynamicProperty {
    @StateObject private var storage: RealmObjectStorage<T>

    public var wrappedValue: T {
        get { storage.wrappedValue }
        nonmutating set { storage.value = newValue }
    }

    public var projectedValue: Binding<T> {
        let storage = storage
        return Binding(get: { storage.liveValue }, set: { storage.value = $0 })
    }

    public init<Value>(wrappedValue: T) where T == List<Value> {
        _storage = StateObject(wrappedValue: RealmObjectStorage(wrappedValue) { List() })
    }

    public init<Value>(wrappedValue: T) where T == MutableSet<Value> {
        _storage = StateObject(wrappedValue: RealmObjectStorage(wrappedValue) { MutableSet() })
    }

    public init<Key, Value>(wrappedValue: T) where T == Map<Key, Value> {
        _storage = StateObject(wrappedValue: RealmObjectStorage(wrappedValue) { Map() })
    }

    public init(wrappedValue: T) where T: ObjectBase & Identifiable {
        _storage = StateObject(wrappedValue: RealmObjectStorage(wrappedValue) { T() })
    }

    public init(wrappedValue: T) where T: ProjectionObservable {
        _storage = StateObject(wrappedValue: RealmObjectStorage(wrappedValue) { T(projecting: T.Root()) })
    }

    /// What SwiftUI subscribes to.
    public var _publisher: some Publisher { storage.objectWillChange }
}

// MARK: @ObservedRealmObject

/// An object (or list) handed to a view: observed, read frozen, and written through its
/// bindings (`$item.name`), each write a write transaction.
///
/// ```swift
/// struct ItemRow: View {
///     @ObservedRealmObject var item: Item
///     var body: some View { Toggle("Done", isOn: $item.isFavorite) }
/// }
/// ```
@MainActor @propertyWrapper
public struct ObservedRealmObject<ObjectType>: DynamicProperty
where ObjectType: RealmSubscribable & ThreadConfined & ObservableObject & Equatable {
    /// `$object`: bindings of the object's properties, and `delete()`.
    @MainActor @dynamicMemberLookup
    public struct Wrapper {
        public var wrappedValue: ObjectType

        public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>) -> Binding<Subject> {
            binding(wrappedValue, keyPath)
        }

        public subscript<Subject: Equatable>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>) -> Binding<Subject> {
            binding(wrappedValue, keyPath, isSame: ==)
        }

        public subscript<Subject: RealmSubscribable & ThreadConfined & Equatable>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>)
            -> Binding<Subject> {
            binding(wrappedValue, keyPath, freezeCollections: true)
        }
    }

    @ObservedObject private var storage: RealmObjectStorage<ObjectType>

    public var wrappedValue: ObjectType {
        get { storage.wrappedValue }
        set { storage.value = newValue }
    }

    public var projectedValue: Wrapper {
        Wrapper(wrappedValue: storage.liveValue)
    }

    public init(wrappedValue: ObjectType) where ObjectType: ObjectBase & Identifiable {
        _storage = ObservedObject(wrappedValue: RealmObjectStorage(wrappedValue) { ObjectType() })
    }

    public init<V>(wrappedValue: ObjectType) where ObjectType == List<V> {
        _storage = ObservedObject(wrappedValue: RealmObjectStorage(wrappedValue) { List() })
    }

    public init(wrappedValue: ObjectType) where ObjectType: ProjectionObservable {
        _storage = ObservedObject(wrappedValue: RealmObjectStorage(wrappedValue) { ObjectType(projecting: ObjectType.Root()) })
    }
}

extension ObservedRealmObject.Wrapper where ObjectType: ObjectBase {
    /// Deletes the object from its realm.
    public func delete() {
        realmWrite(wrappedValue) { $0.realm?.delete($0) }
    }
}

// MARK: Environment

private struct RealmConfigurationKey: EnvironmentKey {
    static let defaultValue = Realm.Configuration.defaultConfiguration
}

private struct PartitionValueKey: EnvironmentKey {
    static let defaultValue: (any PartitionValueConvertible)? = nil
}

extension EnvironmentValues {
    /// The configuration `@ObservedResults` and `@AsyncOpen` open their realm with.
    public var realmConfiguration: Realm.Configuration {
        get { self[RealmConfigurationKey.self] }
        set { self[RealmConfigurationKey.self] = newValue }
    }

    /// A realm of the environment's configuration (setting one sets its configuration).
    public var realm: Realm {
        get {
            do { return try Realm(configuration: self[RealmConfigurationKey.self]) } catch {
                preconditionFailure("cannot open the environment's realm: \(error)")
            }
        }
        set { self[RealmConfigurationKey.self] = newValue.configuration }
    }

    /// The partition `@AsyncOpen` and `@AutoOpen` open for partition-based sync.
    public var partitionValue: (any PartitionValueConvertible)? {
        get { self[PartitionValueKey.self] }
        set { self[PartitionValueKey.self] = newValue }
    }
}

#endif
