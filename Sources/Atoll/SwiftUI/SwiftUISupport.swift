import Foundation

// What the SwiftUI wrappers need from Atoll beyond its public API (`package`: the wrappers'
// sources are also compiled on Linux against a SwiftUI stand-in, in another module).

/// The persisted name of a property a key path reads (`\Dog.owner.name` → "owner.name").
package func _realmKeyPathName<Root: ObjectBase, Value>(_ keyPath: KeyPath<Root, Value>) -> String {
    KeyPathNames.name(keyPath)
}

/// An `NSPredicate` in Atoll's query language: its format with the arguments in place, as Apple's
/// Foundation prints it. Linux's Foundation cannot make predicates from formats, so there is none
/// to translate there.
package func _realmQueryString(_ predicate: NSPredicate) -> String {
    #if canImport(Darwin)
    predicate.predicateFormat
    #else
    preconditionFailure("NSPredicate formats exist on Apple platforms only; filter with a query string or `where`")
    #endif
}

#if canImport(Darwin)
extension Results {
    /// The results matching `predicate` (translated to Atoll's query language).
    public func filter(_ predicate: NSPredicate) -> Results<Element> { filter(_realmQueryString(predicate)) }
}
#endif

/// A BSON partition value as sync's partition (`@AsyncOpen(partitionValue:)`).
package func _realmPartition<Partition: BSON>(_ value: Partition) -> (any PartitionValueConvertible)? {
    if let convertible = value as? any PartitionValueConvertible { return convertible }
    preconditionFailure("\(Partition.self) is not a partition value sync supports (string, int, ObjectId, UUID)")
}
