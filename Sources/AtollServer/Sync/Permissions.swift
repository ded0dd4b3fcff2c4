import AtollCore

/// The app's read and write rules applied to partition-based sync. A rule there is a query on one
/// pseudo-object with a single field, `partition`, holding the partition value, e.g.
/// `partition == %user.id` (each user reads, or writes, only the partition named after them). Rules
/// with a type apply to flexible sync only (`FlexibleSync.Rules`, ``SyncConnection/writeRule(for:)``).
enum Permissions {
    static func canRead(_ partition: PartitionValue, user userID: String, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        guard let rule = rules.first(where: { $0.type == nil }) else { return true }
        return allows(rule.read, partition, user: userID)
    }

    static func canWrite(_ partition: PartitionValue, user userID: String, rules: [ServerConfiguration.PermissionRule]) -> Bool {
        guard let rule = rules.first(where: { $0.type == nil }) else { return true }
        return allows(rule.write, partition, user: userID)
    }

    /// Whether `rule` holds for `partition` and `userID`; a rule that cannot be checked says no.
    private static func allows(_ rule: String, _ partition: PartitionValue, user userID: String) -> Bool {
        let value: Value
        let type: PropertyType
        switch partition {
        case .string(let s): (value, type) = (.string(s), .string)
        case .int(let i): (value, type) = (.int(i), .int)
        case .objectId(let o): (value, type) = (.objectId(o), .objectId)
        case .uuid(let u): (value, type) = (.uuid(u), .uuid)
        case .null: (value, type) = (.null, .string)
        }
        guard let schema = try? Schema([ObjectSchema(name: "Partition", properties: [Property(name: "partition", type: type, isOptional: true)])]),
              let query = FlexibleSync.Rules.bind(rule, userID: userID, objectType: "Partition", schema: schema)
        else { return false }
        return query.evaluate(on: ["partition": value], resolver: NoLinkResolver())
    }
}
