@testable import Atoll
import Foundation
import Testing

/// realm-swift hands out one realm per thread and configuration, so what `@ThreadSafe`, `thaw()`
/// or a frozen collection's `thaw()` gives a thread can be changed inside that thread's
/// `realm.write { }`. Realm's own threading examples, run on a thread of their own, and the cache
/// behind them: one instance per thread (actor, queue) and configuration while it is alive.
@Suite struct ThreadRealmTests {
    /// Realm's `@ThreadSafe` example: a background thread opens its realm, and the wrapped
    /// person, read inside the write, is changed by it.
    @Test func aThreadSafeValueReadInsideTheThreadsWriteIsChangedByIt() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "John", "age": 30])
        try realm.write { realm.add(person) }
        @ThreadSafe var personRef = person
        let configuration = Unchecked(t.configuration)
        let reference = Unchecked(_personRef)
        let sameRealm = try onAnotherThread {
            let realm = try Realm(configuration: configuration.value)
            var same = false
            try realm.write {
                guard let person = reference.value.wrappedValue else { return }
                same = person.realm === realm
                person.age = 31
            }
            return same
        }
        #expect(sameRealm)
        realm.refresh()
        #expect(person.age == 31)
    }

    /// Realm's thaw example on a background thread: a frozen list thawed there and appended to
    /// inside that thread's write.
    @Test func aThawedListIsChangedInsideTheWriteOfTheRealmOpenOnTheThread() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let person = Person(value: ["name": "John"])
        try realm.write { realm.add(person) }
        let frozenDogs = Unchecked(person.dogs.freeze())
        let frozenPerson = Unchecked(person.freeze())
        let configuration = Unchecked(t.configuration)
        let sameRealm = try onAnotherThread {
            let realm = try Realm(configuration: configuration.value)
            guard let dogs = frozenDogs.value.thaw(), let thawedPerson = frozenPerson.value.thaw() else { return false }
            try realm.write {
                dogs.append(Dog(value: ["name": "Rex"]))
                thawedPerson.age = 40
            }
            return dogs.realm === realm && thawedPerson.realm === realm
        }
        #expect(sameRealm)
        realm.refresh()
        #expect(person.dogs.map(\.name) == ["Rex"])
        #expect(person.age == 40)
    }

    /// `Realm()` on one thread hands out the instance already open there, so an object read
    /// through one `Realm()` is changed in another's `write { }`; another thread, queue or actor
    /// has its own, and an instance no one holds any more is not kept.
    @Test func aThreadActorOrQueueHasOneRealmPerConfiguration() async throws {
        let t = try TestRealm()
        let configuration = t.configuration
        let result = try await onAnotherThread {
            let first = try Realm(configuration: configuration)
            let second = try Realm(configuration: configuration)
            try first.write { first.add(Person(value: ["name": "John"])) }
            let john = try #require(second.objects(Person.self).first)
            try first.write { john.age = 7 }
            let queue = DispatchQueue(label: "ThreadRealmTests")
            let onQueue = queue.sync {
                let a = try? Realm(configuration: configuration, queue: queue)
                let b = try? Realm(configuration: configuration, queue: queue)
                return Unchecked((a, a != nil && a === b))
            }
            let otherTypes = try Realm(configuration: Realm.Configuration(
                fileURL: configuration.fileURL, objectTypes: [Person.self, Dog.self, Address.self, Task.self]))
            return Unchecked((first === second, john.realm === first, onQueue.value.1,
                              onQueue.value.0 !== first, otherTypes !== first, ObjectIdentifier(first)))
        }
        let (same, objectsRealm, queueSame, queueOwn, otherTypesOwn, _) = result.value
        #expect(same && objectsRealm && queueSame && queueOwn && otherTypesOwn)
        #expect(try t.open().objects(Person.self).first?.age == 7)

        let actor = RealmHolder()
        let (a, b) = try await actor.openTwice(configuration)
        #expect(a && b)
    }

    /// A thaw lands in the thread's realm, refreshed first when the frozen value is newer than it
    /// (even with autorefresh off, as realm-core advances a realm resolving a newer reference);
    /// a realm of another thread is never used.
    @Test func aThawUsesTheThreadsRealmAdvancedToTheFrozenVersion() throws {
        let t = try TestRealm()
        let realm = try t.open()
        realm.autorefresh = false
        try realm.write { realm.add(Person(value: ["name": "John"])) }
        let frozen = try #require(realm.objects(Person.self).first).freeze()
        #expect(frozen.thaw()?.realm === realm)
        let configuration = Unchecked(t.configuration)
        let newer = try onAnotherThread {
            let realm = try Realm(configuration: configuration.value)
            try realm.write { realm.objects(Person.self).first!.age = 6 }
            return Unchecked(realm.objects(Person.self).first!.freeze())
        }
        #expect(realm.objects(Person.self).first?.age == 0)
        let thawed = try #require(newer.value.thaw())
        #expect(thawed.realm === realm)
        #expect(thawed.age == 6)
        let frozenHere = Unchecked(frozen)
        let elsewhere = try onAnotherThread { Unchecked(frozenHere.value.thaw()?.realm) }
        #expect(elsewhere.value != nil && elsewhere.value !== realm)
    }
}

private actor RealmHolder {
    /// Whether two opens on this actor give one instance, and whether it differs from a thread's.
    func openTwice(_ configuration: Realm.Configuration) async throws -> (Bool, Bool) {
        let a = try await Realm(configuration: configuration, actor: self)
        let b = try Realm(configuration: configuration)
        let thread = try await onAnotherThread { Unchecked(try Realm(configuration: configuration)) }
        return (a === b, thread.value !== a)
    }
}
