import Foundation

// `observe(keyPaths:)` with Swift key paths (`[\.name, \.age]`), as realm-swift has it next to
// the string form: the key paths name the properties whose changes count as modifications.

extension ObjectBase {
    public func observe<T: ObjectBase>(keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue? = nil,
                                       _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension Results where Element: ObjectBase {
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension List where Element: ObjectBase {
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension MutableSet where Element: ObjectBase {
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension LinkingObjects {
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension AnyRealmCollection where Element: ObjectBase {
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}

extension SectionedResults {
    public func observe(keyPaths: [PartialKeyPath<SectionElement>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: queue, block)
    }
}
