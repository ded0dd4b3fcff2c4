/// The user a permission rule is evaluated for. A rule names the user's values with placeholders:
/// `%user.id`, `%user.custom_data.<field>` (the custom user data the session's access token
/// carries, dots for nested documents) and `%user.data.<field>` (the user's profile: `email`).
///
/// ```swift
/// let user = RuleUser(id: "u1", customData: ["team": .string("blue")])
/// let query = FlexibleSync.Rules.bind("team == %user.custom_data.team", user: user, objectType: "Task", schema: schema)
/// ```
public struct RuleUser: Sendable, Hashable {
    public var id: String
    /// The user's custom data, as the access token carries it.
    public var customData: [String: Value]
    /// The user's profile (`email`).
    public var data: [String: Value]

    public init(id: String, customData: [String: Value] = [:], data: [String: Value] = [:]) {
        self.id = id
        self.customData = customData
        self.data = data
    }

    /// The value a placeholder (without `%user.`: `id`, `custom_data.team`) stands for; nil when
    /// the user has no such value (a rule that needs it holds for no object).
    public func value(at path: String) -> Value? {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let head = parts.first else { return nil }
        switch head {
        case "id" where parts.count == 1: return .string(id)
        case "custom_data": return Self.lookup(parts.dropFirst(), in: customData)
        case "data": return Self.lookup(parts.dropFirst(), in: data)
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
    public func substituting(_ rule: String) -> (text: String, arguments: [Value])? {
        var text = ""
        var arguments: [Value] = []
        var rest = Substring(rule)
        let marker = "%user."
        while let range = rest.range(of: marker) {
            text += rest[..<range.lowerBound]
            var end = range.upperBound
            while end < rest.endIndex, rest[end].isLetter || rest[end].isNumber || rest[end] == "_" || rest[end] == "." {
                end = rest.index(after: end)
            }
            var path = String(rest[range.upperBound..<end])
            while path.hasSuffix(".") { path.removeLast(); end = rest.index(before: end) }
            guard let value = value(at: path) else { return nil }
            text += "$\(arguments.count)"
            arguments.append(value)
            rest = rest[end...]
        }
        text += rest
        return (text, arguments)
    }
}
