import AtollCore
import Foundation
import Testing

/// Rules on arrays (issue 24 §1): a field in the user's array (`team IN %user.custom_data.teams`),
/// the user in the document's list (`%user.id IN members`, `members == %user.id`) and the user's
/// identities. The user's values are typed arguments; a value that is not an array, is too long,
/// or does not fit the field makes the rule hold for no object: never more than the source.
@Suite struct RuleUserListTests {
    static let schema = try! Schema([ObjectSchema(name: "Project", properties: [
        Property(name: "_id", type: .string, isPrimaryKey: true),
        Property(name: "team", type: .string),
        Property(name: "level", type: .int),
        Property(name: "members", type: .string, collection: .list),
    ])])

    static func holds(_ rule: String, _ user: RuleUser, team: String = "blue", level: Int64 = 1, members: [String] = []) -> Bool {
        guard let query = FlexibleSync.Rules.bind(rule, user: user, objectType: "Project", schema: schema) else { return false }
        let object: [String: Value] = ["_id": .string("p"), "team": .string(team), "level": .int(level),
                                       "members": .list(members.map { .string($0) })]
        return query.evaluate(on: object, resolver: NoLinkResolver())
    }

    static func user(teams: Value) -> RuleUser { RuleUser(id: "u1", customData: ["teams": teams]) }

    @Test func aFieldInTheUsersArray() {
        let rule = "team IN %user.custom_data.teams"
        let member = Self.user(teams: .list([.string("red"), .string("blue")]))
        #expect(Self.holds(rule, member, team: "blue"))
        #expect(!Self.holds(rule, member, team: "green"))
        #expect(!Self.holds(rule, Self.user(teams: .list([])), team: "blue"))
        #expect(!Self.holds("NOT (\(rule))", member, team: "blue"))
        #expect(Self.holds("NOT (\(rule))", member, team: "green"))
        // A list field against the user's array: any element in it, as MongoDB's $in on an array.
        #expect(Self.holds("members IN %user.custom_data.teams", member, members: ["x", "red"]))
        #expect(!Self.holds("members IN %user.custom_data.teams", member, members: ["x"]))
    }

    /// An empty array is an array: nothing is in it, and the rest of the rule still decides.
    @Test func anEmptyArrayMatchesNothingButLeavesTheRuleWhole() {
        let user = Self.user(teams: .list([]))
        #expect(!Self.holds("team IN %user.custom_data.teams", user))
        #expect(Self.holds("(team IN %user.custom_data.teams) OR (members == %user.id)", user, members: ["u1"]))
        #expect(Self.holds("NOT (team IN %user.custom_data.teams)", user))
    }

    @Test func theUserInTheDocumentsList() {
        let user = RuleUser(id: "u1")
        for rule in ["%user.id IN members", "members == %user.id"] {
            #expect(Self.holds(rule, user, members: ["u0", "u1"]), "\(rule)")
            #expect(!Self.holds(rule, user, members: ["u0"]), "\(rule)")
            #expect(!Self.holds(rule, user, members: []), "\(rule)")
        }
        // MongoDB's $ne on an array: no element equal (Atoll's `!=` through a list would be ANY).
        #expect(!Self.holds("NOT (members == %user.id)", user, members: ["u0", "u1"]))
        #expect(Self.holds("NOT (members == %user.id)", user, members: ["u0"]))
        // A single value is not a list: IN of a field that is none holds for nothing.
        #expect(!Self.holds("%user.id IN team", user, team: "u1"))
    }

    /// Adversarial user values: the rule holds for no object, whatever the object.
    @Test(arguments: [
        ("not an array", Value.string("blue")),
        ("a number", Value.int(7)),
        ("a document", Value.map(["blue": .bool(true)])),
        ("an array of arrays", Value.list([.list([.string("blue")])])),
        ("numbers for a string field", Value.list([.int(1), .string("blue")])),
        ("too long", Value.list((0...RuleUser.maximumListCount).map { .string("t\($0)") } + [.string("blue")])),
    ])
    func aUserValueThatIsNoFittingArrayGrantsNothing(_ what: String, _ teams: Value) {
        let user = Self.user(teams: teams)
        #expect(!Self.holds("team IN %user.custom_data.teams", user, team: "blue"), "\(what)")
        #expect(!Self.holds("NOT (team IN %user.custom_data.teams)", user, team: "green"), "\(what)")
        #expect(!Self.holds("(team IN %user.custom_data.teams) OR (level > 5)", user, team: "blue", level: 9), "\(what)")
    }

    @Test func theLongestListAllowedStillWorks() {
        let teams = (0..<RuleUser.maximumListCount - 1).map { Value.string("t\($0)") } + [.string("blue")]
        #expect(Self.holds("team IN %user.custom_data.teams", Self.user(teams: .list(teams)), team: "blue"))
    }

    @Test func aMissingUserValueGrantsNothing() {
        #expect(!Self.holds("team IN %user.custom_data.teams", RuleUser(id: "u1"), team: "blue"))
        #expect(!Self.holds("NOT (team IN %user.custom_data.teams)", RuleUser(id: "u1"), team: "blue"))
    }

    @Test func identitiesAreAListOfTheUsers() {
        let user = RuleUser(id: "u1", identities: [.init(id: "e@x.com", providerType: "local-userpass"),
                                                  .init(id: "sub-1", providerType: "custom-token")])
        #expect(user.value(at: "identities.provider_type") == .list([.string("local-userpass"), .string("custom-token")]))
        #expect(user.value(at: "identities.id") == .list([.string("e@x.com"), .string("sub-1")]))
        #expect(user.value(at: "identities") == nil)
        #expect(user.value(at: "identities.data") == nil)
        #expect(FlexibleSync.Rules.holds("'custom-token' IN %user.identities.provider_type", for: user))
        #expect(!FlexibleSync.Rules.holds("'anon-user' IN %user.identities.provider_type", for: user))
        #expect(!FlexibleSync.Rules.holds("'custom-token' IN %user.identities.provider_type", for: RuleUser(id: "u2")))
        // Compared as a whole, a list is refused by the query language: the condition does not hold.
        #expect(!FlexibleSync.Rules.holds("%user.identities.provider_type == 'custom-token'", for: user))
    }

    /// The user's values are arguments, never text: a value that looks like query text is a value.
    @Test func userValuesAreNeverRuleText() {
        let user = Self.user(teams: .list([.string("x' OR TRUEPREDICATE OR team == 'y"), .string("}")]))
        #expect(!Self.holds("team IN %user.custom_data.teams", user, team: "blue"))
        #expect(Self.holds("team IN %user.custom_data.teams", user, team: "}"))
    }
}
