import AtollCore
import Foundation

/// The app's read and write rules applied to partition-based sync. A rule there is a query on one
/// pseudo-object with a single field, `partition`, holding the partition value, e.g.
/// `partition == %user.id` (each user reads, or writes, only the partition named after them). Rules
/// with a type apply to flexible sync only (`FlexibleSync.Rules`, ``SyncConnection/writeRule(for:)``).
enum Permissions {
    static func canRead(_ partition: PartitionValue, user userID: String, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        canRead(partition, user: RuleUser(id: userID), rules: rules)
    }

    static func canWrite(_ partition: PartitionValue, user userID: String, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        canWrite(partition, user: RuleUser(id: userID), rules: rules)
    }

    /// Whether `user` may read `partition` by `rules` (the rules that apply to the user, or all of
    /// an app without roles).
    static func canRead(_ partition: PartitionValue, user: RuleUser, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        guard let rule = rules.first(where: { $0.type == nil }) else { return true }
        return allows(rule.read, partition, user: user)
    }

    static func canWrite(_ partition: PartitionValue, user: RuleUser, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        guard let rule = rules.first(where: { $0.type == nil }) else { return true }
        return allows(rule.write, partition, user: user)
    }

    /// `instructions` with the changes of fields `access` does not let the user read put back to
    /// their defaults (``FlexibleSync/hiding(_:in:schema:)``; partition rules have no type: a field
    /// is hidden by its name in every type of `schema`).
    static func hiding(_ access: FieldAccess, in instructions: [Instruction], schema: [String: ObjectSchema]) -> [Instruction] {
        let hidden = schema.mapValues { access.hidden(in: $0) }.filter { !$0.value.isEmpty }
        return FlexibleSync.hiding(hidden, in: instructions, schema: schema)
    }

    /// Whether `rule` holds for `partition` and `user`; a rule that cannot be checked says no.
    static func allows(_ rule: String, _ partition: PartitionValue, user: RuleUser) -> Bool {
        let value: Value
        let type: PropertyType
        switch partition {
        case .string(let s): (value, type) = (.string(s), .string)
        case .int(let i): (value, type) = (.int(i), .int)
        case .objectId(let o): (value, type) = (.objectId(o), .objectId)
        case .uuid(let u): (value, type) = (.uuid(u), .UUID)
        case .null: (value, type) = (.null, .string)
        }
        guard let schema = try? Schema([ObjectSchema(name: "Partition", properties: [Property(name: "partition", type: type, isOptional: true)])]),
              let query = FlexibleSync.Rules.bind(rule, user: user, objectType: "Partition", schema: schema)
        else { return false }
        return query.evaluate(on: ["partition": value], resolver: NoLinkResolver())
    }
}

extension ServerConfiguration.App {
    /// The rules that apply to `user`, one per type the app's rules name (and one for every other
    /// type when a rule has no type): the first rule of the type whose `when` holds for the user,
    /// else a rule that lets the user neither read nor write the type. Without any rule the
    /// result is empty: everyone may read and write everything.
    ///
    /// - Complexity: O(*r*) in the rules, each role's condition checked at most once.
    package func rules(for user: RuleUser) -> [ServerConfiguration.PermissionRule] {
        var out: [ServerConfiguration.PermissionRule] = []
        var decided = Set<String?>()
        var holds: [String: Bool] = [:]
        for rule in permissions where !decided.contains(rule.type) {
            let applies: Bool
            if let condition = rule.when {
                if let known = holds[condition] { applies = known } else {
                    applies = FlexibleSync.Rules.holds(condition, for: user)
                    holds[condition] = applies
                }
            } else {
                applies = true
            }
            guard applies else { continue }
            decided.insert(rule.type)
            out.append(rule)
        }
        for type in Set(permissions.map(\.type)).subtracting(decided) { out.append(.denying(type)) }
        return out
    }
}

extension ServerConfiguration.App {
    /// The read side of `rules` (the roles that apply to `user`, ``rules(for:)``) for flexible
    /// sync and remote data access: read rules per type and field permissions.
    func flexibleRules(_ rules: [ServerConfiguration.PermissionRule], user: RuleUser) -> FlexibleSync.Rules {
        var fieldAccess: [String: FieldAccess] = [:]
        for rule in rules { if let fields = rule.fields { fieldAccess[rule.type ?? ""] = fields } }
        return FlexibleSync.Rules(queryableFields: queryableFields, readRules: rules.map { (type: $0.type, query: $0.read) },
                                  user: user, fieldAccess: fieldAccess)
    }
}

extension RuleUser {
    /// The user as rules see them: the id, the custom data the access token carries (relaxed or
    /// canonical extended JSON), the profile's e-mail address and name, and the identities.
    init(_ user: StoredUser, customData: [String: JSONValue]?) {
        // The custom JWT's metadata fields, then the profile's own e-mail address and name.
        var data = user.metadata.mapValues(Self.value)
        if let email = user.email { data["email"] = .string(email) }
        if let name = user.name { data["name"] = .string(name) }
        self.init(id: user.id, customData: (customData ?? [:]).mapValues(Self.value), data: data,
                  identities: user.identities.map { Identity(id: $0.id, providerType: $0.providerType) })
    }

    /// A value of extended JSON (`{"$oid": …}`, `{"$numberLong": …}` …); documents as maps.
    static func value(_ json: JSONValue) -> Value {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .list(items.map(value))
        case .object(let fields):
            if fields.count == 1, let only = fields.first {
                switch (only.key, only.value) {
                case ("$oid", .string(let hex)): if let id = try? ObjectId(string: hex) { return .objectId(id) }
                case ("$numberLong", .string(let text)), ("$numberInt", .string(let text)): if let i = Int64(text) { return .int(i) }
                case ("$numberDouble", .string(let text)): if let d = Double(text) { return .double(d) }
                case ("$numberDecimal", .string(let text)): if let d = try? Decimal128(string: text) { return .decimal(d) }
                case ("$uuid", .string(let text)): if let u = UUID(uuidString: text) { return .uuid(u) }
                case ("$date", .object(let date)):
                    if case .string(let ms)? = date["$numberLong"], let millis = Int64(ms) {
                        return .date(Date(timeIntervalSince1970: Double(millis) / 1000))
                    }
                default: break
                }
            }
            return .map(fields.mapValues(value))
        }
    }
}
