import Atoll
import AtollTesting
import Foundation
import Testing

/// A failable mapping: a string is an address only with an `@`.
struct CPEmail: FailableCustomPersistable, Hashable, Sendable {
    typealias PersistedType = String
    let address: String
    init(_ address: String) { self.address = address }
    init?(persistedValue: String) {
        guard persistedValue.contains("@") else { return nil }
        address = persistedValue
    }
    var persistableValue: String { address }
}

/// A non-failable mapping to an integer.
struct CPCents: CustomPersistable, Hashable, Sendable {
    typealias PersistedType = Int
    var cents: Int
    init(cents: Int) { self.cents = cents }
    init(persistedValue: Int) { cents = persistedValue }
    var persistableValue: Int { cents }
}

final class CPContact: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var email = CPEmail("nobody@example.com")
    @Persisted var backup: CPEmail?
    @Persisted var balance: CPCents
    @Persisted var previous: List<CPEmail>
    @Persisted var aliases: MutableSet<CPEmail>
    @Persisted var byRole: Map<String, CPEmail>
}

/// `CustomPersistable` and `FailableCustomPersistable`: types stored as another type.
@Suite struct CustomPersistableTests {
    private func realm() throws -> (TestRealm, Realm) {
        let t = try TestRealm(objectTypes: [CPContact.self])
        return (t, try t.open())
    }

    private let ann = CPEmail("ann@example.com")
    private let work = CPEmail("ann@work.example")

    @Test func schemaUsesThePersistedType() throws {
        let (t, realm) = try realm()
        _ = t
        let schema = try #require(realm.schema["CPContact"])
        #expect(schema["email"]?.type == .string)
        #expect(schema["email"]?.isOptional == false)
        #expect(schema["backup"]?.isOptional == true)
        #expect(schema["balance"]?.type == .int)
        #expect(schema["previous"]?.isArray == true)
        #expect(schema["previous"]?.type == .string)
        #expect(schema["byRole"]?.isMap == true)
    }

    @Test func propertiesAndCollectionsRoundTrip() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write {
            let contact = CPContact()
            contact.name = "ann"
            contact.email = ann
            contact.balance = CPCents(cents: 250)
            contact.previous.append(objectsIn: [work, ann])
            contact.aliases.insert(work)
            contact.byRole["work"] = work
            realm.add(contact)
            realm.create(CPContact.self, value: ["name": "by value", "email": "bo@example.com", "backup": work,
                                                 "balance": 5, "previous": ["old@example.com"]])
        }
        let contact = try #require(realm.object(ofType: CPContact.self, forPrimaryKey: "ann"))
        #expect(contact.email == ann)
        #expect(contact.backup == nil)
        #expect(contact.balance == CPCents(cents: 250))
        #expect(Array(contact.previous) == [work, ann])
        #expect(Array(contact.aliases) == [work])
        #expect(contact.byRole["work"] == work)
        let byValue = try #require(realm.object(ofType: CPContact.self, forPrimaryKey: "by value"))
        #expect(byValue.email.address == "bo@example.com")
        #expect(byValue.backup == work)
        #expect(byValue.balance.cents == 5)
        #expect(byValue.previous.first?.address == "old@example.com")
        try realm.write { contact.backup = work; contact.balance = CPCents(cents: 300) }
        #expect(contact.backup == work && contact.balance.cents == 300)
        #expect(contact.value(forKey: "balance") as? CPCents == CPCents(cents: 300))
    }

    @Test func typedQueriesCompareThePersistedValue() throws {
        let (t, realm) = try realm()
        _ = t
        try realm.write {
            realm.create(CPContact.self, value: ["name": "ann", "email": ann, "balance": 100, "previous": [work]])
            realm.create(CPContact.self, value: ["name": "nobody", "balance": 900])
        }
        let contacts = realm.objects(CPContact.self)
        #expect(contacts.where { $0.email == ann }.map(\.name) == ["ann"])
        #expect(contacts.where { $0.email != ann }.map(\.name) == ["nobody"])
        #expect(contacts.where { $0.email == "nobody@example.com" }.map(\.name) == ["nobody"])
        #expect(contacts.where { $0.email.ends(with: "@example.com") }.count == 2)
        #expect(contacts.where { $0.email.starts(with: "ann") }.map(\.name) == ["ann"])
        #expect(contacts.where { $0.balance > CPCents(cents: 500) }.map(\.name) == ["nobody"])
        #expect(contacts.where { $0.balance < 500 }.map(\.name) == ["ann"])
        #expect(contacts.where { $0.previous.contains(work) }.map(\.name) == ["ann"])
        #expect(contacts.where { $0.backup == nil }.count == 2)
        #expect(contacts.where { $0.email.in([ann, work]) }.count == 1)
        #expect(contacts.filter("email == %@", ann).map(\.name) == ["ann"])
        #expect(contacts.filter("balance >= %@", CPCents(cents: 900)).map(\.name) == ["nobody"])
        #expect(contacts.sorted(byKeyPath: "balance", ascending: false).first?.name == "nobody")
        // realm-swift's way to reach the stored form: `.persistableValue`.
        #expect(contacts.where { $0.email.persistableValue.contains("work") || $0.email.persistableValue == "ann@example.com" }
            .map(\.name) == ["ann"])
        #expect(contacts.where { $0.balance.persistableValue.contains(800..<1000) }.map(\.name) == ["nobody"])
    }

    @Test func aStoredValueThatDoesNotConvertReadsAsNilWhenOptional() throws {
        let (t, realm) = try realm()
        _ = t
        // A string that is no address, written as the stored type through the dynamic API.
        try realm.write {
            realm.create(CPContact.self, value: ["name": "bad"])
            realm.dynamicObject(ofType: "CPContact", forPrimaryKey: "bad")!["backup"] = "not an address"
        }
        let bad = try #require(realm.object(ofType: CPContact.self, forPrimaryKey: "bad"))
        #expect(realm.dynamicObject(ofType: "CPContact", forPrimaryKey: "bad")?["backup"] as? String == "not an address")
        #expect(bad.backup == nil)
    }

    @Test func aValueOfTheStoredTypeThatDoesNotConvertIsRejected() throws {
        let (t, realm) = try realm()
        _ = t
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(CPContact.self, value: ["name": "x", "email": "no at sign"]) }
        }
        #expect(realm.objects(CPContact.self).isEmpty)
    }

    @Test func unmanagedObjectsKeepTheValue() {
        let contact = CPContact(value: ["name": "u", "email": "u@example.com", "balance": CPCents(cents: 7)])
        #expect(contact.email.address == "u@example.com")
        #expect(contact.balance.cents == 7)
        contact.previous.append(work)
        #expect(contact.previous.first == work)
    }
}
