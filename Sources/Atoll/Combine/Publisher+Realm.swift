#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch
#endif
import Foundation

// MARK: Operators

extension Publisher {
    /// Freezes each value, so it can cross to any thread.
    public func freeze<T>() -> Publishers.Map<Self, T> where Output: ThreadConfined, T == Output {
        map { $0.freeze() }
    }

    /// Freezes the object of each change.
    public func freeze<T: Object>() -> Publishers.Map<Self, ObjectChange<T>> where Output == ObjectChange<T> {
        map { change in
            guard case .change(let object, let properties) = change else { return change }
            return .change(object.freeze(), properties)
        }
    }

    /// Freezes the projection of each change.
    public func freeze<T: ProjectionObservable>() -> Publishers.Map<Self, ObjectChange<T>> where Output == ObjectChange<T>, T: ThreadConfined {
        map { change in
            guard case .change(let projection, let properties) = change else { return change }
            return .change(projection.freeze(), properties)
        }
    }

    /// Freezes the collection of each change.
    public func freeze<T: RealmCollection>() -> Publishers.Map<Self, RealmCollectionChange<T>> where Output == RealmCollectionChange<T> {
        map { change in
            switch change {
            case .initial(let collection): .initial(collection.freeze())
            case .update(let collection, let d, let i, let m): .update(collection.freeze(), deletions: d, insertions: i, modifications: m)
            case .error: change
            }
        }
    }

    /// Freezes the sections of each change.
    public func freeze<T: RealmSectionedResult>() -> Publishers.Map<Self, SectionedResultsChange<T>> where Output == SectionedResultsChange<T> {
        map { change in
            switch change {
            case .initial(let sections): .initial(sections.freeze())
            case .update(let sections, let d, let i, let m, let si, let sd):
                .update(sections.freeze(), deletions: d, insertions: i, modifications: m, sectionsToInsert: si, sectionsToDelete: sd)
            }
        }
    }

    /// Freezes the map of each change.
    public func freeze<T: RealmKeyedCollection>() -> Publishers.Map<Self, RealmMapChange<T>> where Output == RealmMapChange<T>, T: ThreadConfined {
        map { change in
            switch change {
            case .initial(let map): .initial(map.freeze())
            case .update(let map, let d, let i, let m): .update(map.freeze(), deletions: d, insertions: i, modifications: m)
            case .error: change
            }
        }
    }
}

extension Publisher where Output: ThreadConfined {
    /// Lets the next `receive(on:)` hand live values over to its scheduler's thread.
    public func threadSafeReference() -> RealmPublishers.MakeThreadSafe<Self> {
        RealmPublishers.MakeThreadSafe(upstream: self)
    }
}

extension Publisher {
    public func threadSafeReference<T: Object>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T> where Output == ObjectChange<T> {
        RealmPublishers.MakeThreadSafeObjectChangeset(upstream: self)
    }

    public func threadSafeReference<T: ProjectionObservable>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T>
    where Output == ObjectChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeObjectChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmCollection>() -> RealmPublishers.MakeThreadSafeCollectionChangeset<Self, T>
    where Output == RealmCollectionChange<T> {
        RealmPublishers.MakeThreadSafeCollectionChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmKeyedCollection>() -> RealmPublishers.MakeThreadSafeKeyedCollectionChangeset<Self, T>
    where Output == RealmMapChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeKeyedCollectionChangeset(upstream: self)
    }

    public func threadSafeReference<T: RealmSectionedResult>() -> RealmPublishers.MakeThreadSafeSectionedResultsChangeset<Self, T>
    where Output == SectionedResultsChange<T>, T: ThreadConfined {
        RealmPublishers.MakeThreadSafeSectionedResultsChangeset(upstream: self)
    }
}

// MARK: Free functions

/// The object after each change of it; its deletion finishes the publisher.
public func valuePublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T> {
    RealmPublishers.Value(object, keyPaths: keyPaths)
}

/// The collection now and after each change of it.
public func valuePublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T> {
    RealmPublishers.Value(collection, keyPaths: keyPaths)
}

/// The projection after each change of a projected property.
public func valuePublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T>
where T: ThreadConfined & RealmSubscribable {
    RealmPublishers.Value(projection, keyPaths: keyPaths)
}

/// Each change of the object, with the properties that changed; its deletion finishes it.
public func changesetPublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.ObjectChangeset<T> {
    precondition(object.realm != nil, "Only managed objects can be published")
    precondition(!object.isInvalidated, "Invalidated object cannot be used")
    return RealmPublishers.ObjectChangeset { queue, block in object.observe(keyPaths: keyPaths, on: queue, block) }
}

/// Each change of the projection.
public func changesetPublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil) -> RealmPublishers.ObjectChangeset<T>
where T: ThreadConfined {
    precondition(projection.realm != nil, "Only managed objects can be published")
    return RealmPublishers.ObjectChangeset { queue, block in projection.observe(keyPaths: keyPaths ?? [], on: queue, block) }
}

/// `.initial` and each `.update` of the collection.
public func changesetPublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil) -> RealmPublishers.CollectionChangeset<T> {
    RealmPublishers.CollectionChangeset(collection, keyPaths: keyPaths)
}
