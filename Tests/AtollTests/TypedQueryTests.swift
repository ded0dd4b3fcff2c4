@testable import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// The typed `.where { }` builder and the query text give the same results.
@Suite struct TypedQueryTests {
    typealias Case = (label: String, text: String, typed: @Sendable (Query<Person>) -> Query<Bool>)

    static let cases: [Case] = [
        ("equal", "name == 'Ann'", { $0.name == "Ann" }),
        ("not equal", "name != 'Ann'", { $0.name != "Ann" }),
        ("greater", "age > 30", { $0.age > 30 }),
        ("at least", "age >= 30", { $0.age >= 30 }),
        ("less", "age < 30", { $0.age < 30 }),
        ("at most", "age <= 30", { $0.age <= 30 }),
        ("and", "age > 20 AND name BEGINSWITH 'B'", { $0.age > 20 && $0.name.starts(with: "B") }),
        ("or", "age < 20 OR name == 'Cy'", { $0.age < 20 || $0.name == "Cy" }),
        ("not", "NOT age > 30", { !($0.age > 30) }),
        ("nil optional", "height == nil", { $0.height == nil }),
        ("optional value", "height > 1.7", { $0.height > 1.7 }),
        ("contains [c]", "name CONTAINS[c] 'N'", { $0.name.contains("N", options: .caseInsensitive) }),
        ("ends with", "name ENDSWITH 'y'", { $0.name.ends(with: "y") }),
        ("like", "name LIKE 'B?b'", { $0.name.like("B?b") }),
        ("in", "age IN {19, 45}", { $0.age.in([19, 45]) }),
        ("between", "age BETWEEN {20, 40}", { $0.age.contains(20...40) }),
        ("list count", "dogs.@count > 1", { $0.dogs.count > 1 }),
        ("through list", "ANY dogs.name == 'Rex'", { $0.dogs.name == "Rex" }),
        ("set contains", "ANY tags == 'admin'", { $0.tags.contains("admin") }),
        ("embedded", "address.city == 'Paris'", { $0.address.city == "Paris" }),
        ("string list", "ANY nicknames BEGINSWITH 'A'", { $0.nicknames.elements.starts(with: "A") }),
    ]

    static func populate(_ realm: Realm) throws {
        try realm.write {
            let ann = Person(value: ["name": "Ann", "age": 30, "height": 1.65])
            ann.dogs.append(Dog(value: ["name": "Rex", "age": 3]))
            ann.dogs.append(Dog(value: ["name": "Fido", "age": 5]))
            ann.tags.insert("admin")
            ann.address = Address(value: ["street": "Rue", "city": "Paris"])
            ann.nicknames.append("Annie")
            let bob = Person(value: ["name": "Bob", "age": 45, "height": 1.8])
            bob.dogs.append(Dog(value: ["name": "Spot", "age": 2]))
            bob.nicknames.append(objectsIn: ["Bobby", "Al"])
            let cy = Person(value: ["name": "Cy", "age": 19])
            cy.address = Address(value: ["city": "Oslo"])
            realm.add([ann, bob, cy])
        }
    }

    @Test(arguments: cases.indices)
    func typedQueryMatchesText(_ index: Int) throws {
        let c = Self.cases[index]
        let t = try TestRealm()
        let realm = try t.open()
        try Self.populate(realm)
        let people = realm.objects(Person.self).sorted(byKeyPath: "name")
        let typed = people.where(c.typed).map(\.name)
        let text = try people.filter(query: c.text).map(\.name)
        #expect(typed == text, "\(c.label)")
        #expect(!typed.isEmpty || c.label == "none", "\(c.label) matches something, so the comparison means something")
    }

    @Test func typedAndTextQueriesBuildTheSameTree() throws {
        let t = try TestRealm()
        let realm = try t.open()
        let typed = realm.objects(Task.self).where { $0.owner == "Frodo" && !$0.done }
        let text = try realm.objects(Task.self).filter(query: "owner == 'Frodo' AND NOT done == true")
        #expect(typed.core.expression.predicate == text.core.expression.predicate)
    }

    @Test func sortDistinctAndAggregatesThroughKeyPaths() throws {
        let t = try TestRealm()
        let realm = try t.open()
        try Self.populate(realm)
        let people = realm.objects(Person.self)
        #expect(people.sorted(by: \.age).map(\.name) == ["Cy", "Ann", "Bob"])
        #expect(people.sorted(by: \.age, ascending: false).map(\.name) == ["Bob", "Ann", "Cy"])
        #expect(people.max(of: \.age) == 45)
        #expect(people.min(ofProperty: "age") == 19)
        #expect(people.sum(of: \.age) == 94)
        #expect(realm.objects(Dog.self).average(ofProperty: "age") == Double(10) / 3)
        #expect(realm.objects(Dog.self).distinct(by: ["age"]).count == 3)
        #expect(people.filter("age > %d", 20).count == 2)
    }

    @Test func invalidQueryThrowsATypedErrorNamingTheProblem() throws {
        let t = try TestRealm()
        let realm = try t.open()
        #expect {
            _ = try realm.objects(Person.self).filter(query: "nmae == 'Ann'")
        } throws: { error in
            guard let error = error as? Realm.Error else { return false }
            return error.code == .invalidQuery && error.message.contains("nmae")
        }
        #expect {
            _ = try realm.objects(Person.self).filter(query: "age == ")
        } throws: { error in
            (error as? Realm.Error)?.code == .invalidQuery
        }
    }
}
