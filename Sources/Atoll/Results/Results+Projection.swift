import Foundation

extension Realm {
    /// Every object of the projected type, each seen through the projection.
    ///
    /// ```swift
    /// let snows = realm.objects(PersonProjection.self).filter("lastName == %@", "Snow")
    /// ```
    /// The results run over the projected type: queries and sort keys name its properties.
    public func objects<P: ProjectionObservable & RealmCollectionValue>(_ type: P.Type) -> Results<P> where P.Root: Object {
        Results(core: objects(P.Root.self).core)
    }
}

extension Results where Element: ProjectionObservable {
    /// Narrows projections with a typed query of the projected type's properties.
    ///
    /// ```swift
    /// realm.objects(PersonProjection.self).where { $0.lastName == "Snow" }
    /// ```
    public func `where`(_ isIncluded: (Query<Element.Root>) -> Query<Bool>) -> Results<Element> {
        Results(core: Results<Element.Root>(core: core).where(isIncluded).core)
    }

    /// Sorts projections by a property of the projected type.
    public func sorted<V>(by keyPath: KeyPath<Element.Root, V>, ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: KeyPathNames.name(keyPath), ascending: ascending)
    }
}
