import Foundation

// Realm's collections are Equatable by identity, as realm-swift's are: two accessors are equal
// when they read the same collection (the same property of the same object, the same query of
// the same realm); an unmanaged collection equals only itself. SwiftUI's wrappers compare
// with it to tell a new collection from the one they observe.

extension CollectionBacking {
    func isSame(as other: CollectionBacking) -> Bool {
        switch (self, other) {
        case (.managed(let a, let i), .managed(let b, let j)):
            a.realm === b.realm && a.table.name == b.table.name && a.row == b.row && i == j
        default: false
        }
    }
}

extension List: Equatable {
    public static func == (lhs: List, rhs: List) -> Bool { lhs === rhs || lhs.backing.isSame(as: rhs.backing) }
}

extension MutableSet: Equatable {
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool { lhs === rhs || lhs.backing.isSame(as: rhs.backing) }
}

extension Map: Equatable {
    public static func == (lhs: Map, rhs: Map) -> Bool { lhs === rhs || lhs.backing.isSame(as: rhs.backing) }
}

extension Results: Equatable {
    public static func == (lhs: Results, rhs: Results) -> Bool { lhs.core === rhs.core }
}

extension LinkingObjects: Equatable {
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        guard let a = lhs.results, let b = rhs.results, a.realm === b.realm, lhs.propertyName == rhs.propertyName,
              let x = a.core.descriptor.owner, let y = b.core.descriptor.owner else { return false }
        return x.table.name == y.table.name && x.row == y.row && x.property == y.property
    }
}

extension AnyRealmCollection: Equatable {
    /// Equal when they wrap the same collection accessor.
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool { lhs.base === rhs.base }
}

extension List {
    /// Removes the elements at `offsets` (SwiftUI's `onDelete` hands them).
    ///
    /// ```swift
    /// ForEach(person.dogs) { … }.onDelete { try! realm.write { person.dogs.remove(atOffsets: $0) } }
    /// ```
    public func remove(atOffsets offsets: IndexSet) {
        for index in offsets.reversed() { remove(at: index) }
    }

    /// Moves the elements at `offsets` to before `destination` (SwiftUI's `onMove` hands them).
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        var order = Array(indices)
        let moving = offsets.map { order[$0] }
        let before = offsets.filter { $0 < destination }.count
        for index in offsets.reversed() { order.remove(at: index) }
        order.insert(contentsOf: moving, at: destination - before)
        // Apply as single moves from the current positions, so a managed list records moves.
        var current = Array(indices)
        for (target, original) in order.enumerated() {
            let from = current.firstIndex(of: original)!
            if from != target {
                move(from: from, to: target)
                current.insert(current.remove(at: from), at: target)
            }
        }
    }
}
