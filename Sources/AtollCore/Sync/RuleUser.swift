/// The user a permission rule is evaluated for. A rule names the user's values with placeholders:
/// `%user.id`, `%user.custom_data.<field>` (the custom user data the session's access token
/// carries, dots for nested documents), `%user.data.<field>` (the user's profile: `email`, `name`,
/// a custom JWT's metadata fields) and `%user.identities.provider_type` / `%user.identities.id`
/// (a list, one element per identity: `'custom-token' IN %user.identities.provider_type`).
///
/// A value is bound to the rule as a typed argument, never spliced into its text; a list
/// (`team IN %user.custom_data.teams`) longer than ``maximumListCount`` is no value at all.
///
/// ```swift
/// let user = RuleUser(id: "u1", customData: ["team": .string("blue")])
/// let query = FlexibleSync.Rules.bind("team == %user.custom_data.team", user: user, objectType: "Task", schema: schema)
/// ```
package struct RuleUser: Sendable, Hashable {
    package var id: String
    /// The user's custom data, as the access token carries it.
    package var customData: [String: Value]
    /// The user's profile (`email`).
    package var data: [String: Value]
    /// How the user logs in: one entry per identity.
    package var identities: [Identity]

    /// One identity of the user: the provider (`custom-token`, `local-userpass` …) and the id there.
    package struct Identity: Sendable, Hashable {
        package var id: String
        package var providerType: String

        package init(id: String, providerType: String) {
            self.id = id
            self.providerType = providerType
        }
    }

    /// The longest list a placeholder may stand for: a rule naming a longer one holds for no
    /// object (every object would be compared with every element).
    package static let maximumListCount = 1_000

    package init(id: String, customData: [String: Value] = [:], data: [String: Value] = [:], identities: [Identity] = []) {
        self.id = id
        self.customData = customData
        self.data = data
        self.identities = identities
    }

    /// The value a placeholder (without `%user.`: `id`, `custom_data.team`) stands for; nil when
    /// the user has no such value (a rule that needs it holds for no object).
    package func value(at path: String) -> Value? {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let head = parts.first else { return nil }
        switch head {
        case "id" where parts.count == 1: return .string(id)
        case "custom_data": return Self.lookup(parts.dropFirst(), in: customData)
        case "data": return Self.lookup(parts.dropFirst(), in: data)
        case "identities" where parts == ["identities", "provider_type"]: return .list(identities.map { .string($0.providerType) })
        case "identities" where parts == ["identities", "id"]: return .list(identities.map { .string($0.id) })
        default: return nil
        }
    }

    private static func lookup(_ path: ArraySlice<String>, in document: [String: Value]) -> Value? {
        guard let first = path.first, let value = document[first] else { return nil }
        if path.count == 1 { return value }
        switch value {
        case .object(let fields): return lookup(path.dropFirst(), in: fields)
        case .map(let entries): return lookup(path.dropFirst(), in: entries)
        default: return nil
        }
    }

    /// `rule` with each `%user.…` placeholder replaced by an argument (`$0`, `$1` …), and the
    /// arguments; nil when a placeholder names a value the user does not have.
    ///
    /// - Complexity: O(*n*) in the rule's length.
    package func substituting(_ rule: String) -> (text: String, arguments: [Value])? {
        let (text, paths) = Self.template(of: rule)
        var arguments: [Value] = []
        for path in paths {
            guard let value = value(at: path), !value.isLongList else { return nil }
            arguments.append(value)
        }
        return (text, arguments)
    }

    /// `rule` with each `%user.…` placeholder replaced by an argument (`$0`, `$1` …), and the
    /// placeholders' paths (without `%user.`) in argument order: what ``substituting(_:)`` binds
    /// for a user, and what a configuration check parses without one.
    ///
    /// - Complexity: O(*n*) in the rule's length.
    package static func template(of rule: String) -> (text: String, paths: [String]) {
        var text = ""
        var paths: [String] = []
        var rest = Substring(rule)
        while let range = rest.range(of: "%user.") {
            text += rest[..<range.lowerBound]
            var end = range.upperBound
            while end < rest.endIndex, rest[end].isLetter || rest[end].isNumber || rest[end] == "_" || rest[end] == "." {
                end = rest.index(after: end)
            }
            var path = String(rest[range.upperBound..<end])
            while path.hasSuffix(".") { path.removeLast(); end = rest.index(before: end) }
            text += "$\(paths.count)"
            paths.append(path)
            rest = rest[end...]
        }
        text += rest
        return (text, paths)
    }
}

extension Value {
    /// A list or set longer than ``RuleUser/maximumListCount``.
    fileprivate var isLongList: Bool {
        switch self {
        case .list(let items): items.count > RuleUser.maximumListCount
        case .set(let items): items.count > RuleUser.maximumListCount
        default: false
        }
    }
}
