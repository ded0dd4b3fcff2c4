import Foundation

// Observation isolated to an actor: the value is handed to the actor through a
// ThreadSafeReference, read there in a realm of the actor, and the block runs on the actor with
// it isolated, so it can touch the actor's state synchronously.

/// What crosses from the caller to the observing actor: the reference and the configuration.
struct ActorHandover<Value: ThreadConfined>: @unchecked Sendable {
    let reference: ThreadSafeReference<Value>
    let configuration: Realm.Configuration

    init(_ value: Value) {
        guard let realm = value.realm else {
            preconditionFailure("Change notifications are only supported for managed objects")
        }
        reference = ThreadSafeReference(to: value)
        configuration = realm.configuration
    }

    /// Opens a realm of the value's file on `actor`, resolves the value there and registers
    /// the observation `register` makes; an empty token when the value is gone or the task
    /// was cancelled.
    func observe<A: Actor>(on actor: A, _ register: @escaping @Sendable (isolated A, Value) -> NotificationToken) async -> NotificationToken {
        await Self.run(on: actor) { actor in
            if _Concurrency.Task.isCancelled { return NotificationToken(realm: nil) {} }
            let realm: Realm
            do {
                realm = try Realm(configuration: configuration, confinement: .actor(actor))
            } catch {
                preconditionFailure("cannot open the realm to observe on \(actor): \(error)")
            }
            guard let value = realm.resolve(reference) else { return NotificationToken(realm: nil) {} }
            return register(actor, value)
        }
    }

    private static func run<A: Actor>(on actor: isolated A, _ body: @Sendable (isolated A) -> NotificationToken) -> NotificationToken {
        body(actor)
    }
}

extension RealmCollection {
    /// Calls `block` on `actor` with the collection's initial state and after every change of
    /// it; the collection in the change is read in a realm of the actor.
    ///
    /// ```swift
    /// actor Feed {
    ///     var count = 0
    ///     func watch(_ dogs: Results<Dog>) async -> NotificationToken {
    ///         await dogs.observe(on: self) { feed, change in
    ///             if case .update(let dogs, _, _, _) = change { feed.count = dogs.count }
    ///         }
    ///     }
    /// }
    /// ```
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void) async -> NotificationToken {
        await ActorHandover(self).observe(on: actor) { actor, collection in
            collection.observe(keyPaths: keyPaths, on: nil) { change in
                actor.assumeIsolated { actor in block(actor, change) }
            }
        }
    }
}

extension Results where Element: ObjectBase {
    /// `observe(keyPaths:on:_:)` on an actor with Swift key paths (`[\Dog.name]`).
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: actor, block)
    }
}

extension Map {
    /// Calls `block` on `actor` with the map and then with the keys changed by every write.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Map<Key, Value>>) -> Void) async -> NotificationToken {
        await ActorHandover(self).observe(on: actor) { actor, map in
            map.observe(keyPaths: keyPaths, on: nil) { change in
                actor.assumeIsolated { actor in block(actor, change) }
            }
        }
    }
}

extension ObjectBase {
    /// Calls `block` on `actor` after every change of the object (read in a realm of the actor),
    /// and with `.deleted` when it is deleted.
    ///
    /// ```swift
    /// let token = await dog.observe(keyPaths: ["age"], on: counter) { counter, change in
    ///     if case .change = change { counter.birthdays += 1 }
    /// }
    /// ```
    public func observe<A: Actor, T: ObjectBase>(keyPaths: [String]? = nil, on actor: A,
                                                 _isolation: isolated (any Actor)? = #isolation,
                                                 _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        await ActorHandover(self).observe(on: actor) { actor, object in
            object.observe(keyPaths: keyPaths, on: nil) { (change: ObjectChange<T>) in
                actor.assumeIsolated { actor in block(actor, change) }
            }
        }
    }

    /// The same, with Swift key paths (`[\Dog.age]`).
    public func observe<A: Actor, T: ObjectBase>(keyPaths: [PartialKeyPath<T>], on actor: A,
                                                 _isolation: isolated (any Actor)? = #isolation,
                                                 _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name(of: $0) }, on: actor, block)
    }
}
