import AtollCore
import Foundation
import Testing

/// `resolvingNames(from:_:)`: queries written with the names an app uses run with the stored
/// names (Realm's `propertiesMapping()`).
@Suite struct QueryNameResolutionTests {
    /// Person(name → full_name, friend → best_friend: Person, pets → pet_list: List<Pet>,
    /// labels: Map<String, Pet>); Pet(nickname → nick_name, age).
    static let types: [String: [String: Property]] = [
        "Person": [
            "name": Property(name: "full_name", type: .string),
            "friend": Property(name: "best_friend", type: .object, isOptional: true, objectType: "Person"),
            "pets": Property(name: "pet_list", type: .object, collection: .list, objectType: "Pet"),
            "labels": Property(name: "labels", type: .object, collection: .map, isOptional: true, objectType: "Pet"),
            "tags": Property(name: "tag_set", type: .string, collection: .set),
        ],
        "Pet": [
            "nickname": Property(name: "nick_name", type: .string),
            "age": Property(name: "age", type: .int),
        ],
    ]

    static func resolve(_ type: String, _ name: String) -> Property? { types[type]?[name] }

    private func resolved(_ text: String) throws -> String {
        try QueryExpression.parse(text).resolvingNames(from: "Person", Self.resolve).description
    }

    @Test(arguments: [
        ("name == 'Ann'", "full_name == \"Ann\""),
        ("friend.friend.name == 'Bo'", "best_friend.best_friend.full_name == \"Bo\""),
        ("ANY pets.nickname == 'Rex'", "ANY pet_list.nick_name == \"Rex\""),
        ("pets.@count > 1", "pet_list.@count > 1"),
        ("pets.@max.age > 3", "pet_list.@max.age > 3"),
        ("labels['name'].nickname == 'x'", "labels['name'].nick_name == \"x\""),
        ("labels.name.nickname == 'x'", "labels.name.nick_name == \"x\""),
        ("labels.@keys == 'name'", "labels.@keys == \"name\""),
        ("labels.@values.nickname == 'x'", "labels.@values.nick_name == \"x\""),
        ("tags.@count == 0 AND name.@size > 2", "tag_set.@count == 0 AND full_name.@size > 2"),
        ("NOT (name == 'a' OR friend == nil)", "NOT (full_name == \"a\" OR best_friend == nil)"),
        ("name == friend.name", "full_name == best_friend.full_name"),
        ("name != '' SORT(friend.name DESC) DISTINCT(name)", "full_name != \"\" SORT(best_friend.full_name DESC) DISTINCT(full_name)"),
    ])
    func namesAreResolvedAlongThePath(_ text: String, _ expected: String) throws {
        #expect(try resolved(text) == expected)
    }

    @Test func aNameTheResolverDoesNotKnowIsKeptWithTheRestOfThePath() throws {
        #expect(try resolved("full_name == 'Ann'") == "full_name == \"Ann\"")
        #expect(try resolved("nmae.name == 'Ann'") == "nmae.name == \"Ann\"")
        #expect(QueryKeyPath("friend.name").resolvingNames(from: "Unknown", Self.resolve).description == "friend.name")
    }
}
