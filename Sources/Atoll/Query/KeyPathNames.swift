import AtollCore
import Foundation

/// Finds the property name a Swift key path reads, for the typed query builder and key-path based
/// APIs (`sorted(by: \.name)`).
///
/// A probe instance of the class has every `@Persisted` field bound to its property index but no
/// realm; reading a field through the key path records the index instead of touching storage.
@usableFromInline
enum KeyPathNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [AnyKeyPath: String] = [:]
    private static let recorded = Locked<[ObjectIdentifier: Int]>([:])

    static func name<Root: ObjectBase, V>(_ keyPath: KeyPath<Root, V>) -> String { name(of: keyPath as PartialKeyPath<Root>) }

    /// The name of the `@Persisted` property a key path of any value type reads (`observe(keyPaths:)`).
    static func name<Root: ObjectBase>(of keyPath: PartialKeyPath<Root>) -> String {
        guard let name = nameIfPersisted(keyPath) else {
            preconditionFailure("The key path \(keyPath) does not name a @Persisted property of \(Root.self)")
        }
        return name
    }

    /// The name of the `@Persisted` property a key path starts with (`\Person.address?.city`
    /// starts with `address`), or `nil` when it reads none.
    static func nameIfPersisted<Root: ObjectBase>(_ keyPath: PartialKeyPath<Root>) -> String? {
        if let name = lock.withLock({ cache[keyPath] }) { return name }
        guard let name = nameRead(on: Root.self, by: { _ = $0[keyPath: keyPath] }) else { return nil }
        lock.withLock { cache[keyPath] = name }
        return name
    }

    /// The name of the `@Persisted` property of `Root` that `read` reads last from a probe object
    /// (a `Projection` reads its projected object's properties this way).
    static func nameRead<Root: ObjectBase>(on type: Root.Type, by read: (Root) -> Void) -> String? {
        let info = ClassInfo.of(Root.self)
        let probe = Root.init()
        info.bind(probe)
        let id = ObjectIdentifier(probe)
        read(probe)
        guard let index = recorded.withLock({ $0.removeValue(forKey: id) }) else { return nil }
        // The name the app uses; queries and key paths are resolved to stored names later.
        // A `LinkingObjects` field records `fields.count + its position` (see `ClassInfo.bind`).
        return index < info.publicNames.count ? info.publicNames[index] : info.linkingFields[index - info.fields.count].name
    }

    /// Called by `@Persisted` when a bound field of an object without a realm is read.
    @usableFromInline
    static func record(_ object: ObjectBase, _ index: Int) {
        recorded.withLock { $0[ObjectIdentifier(object)] = index }
    }
}
