@testable import Atoll
import Foundation
import Testing

/// realm-swift hands out one realm per thread and configuration, so what `@ThreadSafe`, `thaw()`
/// or a frozen collection's `thaw()` gives a thread can be changed inside that thread's
/// `realm.write { }`. Atoll's `Realm()` opens a new instance, and those hand-outs find the realm
/// already open on the thread. Realm's own threading examples, run on a thread of their own.
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

    /// Inside a write, a thaw lands in the realm that is writing, even with another realm of the
    /// file open on the thread; outside one, in the newest realm of the thread. A frozen value
    /// newer than the thread's realm refreshes it first; a realm of another thread is never used.
    @Test func aThawFindsTheWritingRealmOfTheThreadElseTheNewest() throws {
        let t = try TestRealm()
        let first = try t.open()
        try first.write { first.add(Person(value: ["name": "John"])) }
        let frozen = try #require(first.objects(Person.self).first).freeze()
        let second = try t.open()
        #expect(frozen.thaw()?.realm === second)
        try first.write {
            let thawed = try #require(frozen.thaw())
            #expect(thawed.realm === first)
            thawed.age = 5
        }
        let configuration = Unchecked(t.configuration)
        let newer = try onAnotherThread {
            let realm = try Realm(configuration: configuration.value)
            try realm.write { realm.objects(Person.self).first!.age = 6 }
            return Unchecked(realm.objects(Person.self).first!.freeze())
        }
        #expect(second.objects(Person.self).first?.age == 5)
        let thawed = try #require(newer.value.thaw())
        #expect(thawed.realm === second)
        #expect(thawed.age == 6)
        let frozenHere = Unchecked(frozen)
        let elsewhere = try onAnotherThread { Unchecked(frozenHere.value.thaw()?.realm) }
        #expect(elsewhere.value != nil && elsewhere.value !== first && elsewhere.value !== second)
    }
}
