import Foundation

/// A JSON value as ``MongoExpression`` reads it: an App Services export's JSON (`atoll apps
/// import`) or a request's ``JSONNode`` (remote data access).
package protocol MongoJSON: Sendable {
    var mongo: MongoJSONKind<Self> { get }
    /// The value as a typed literal (Extended JSON wrappers read), or nil when it is none.
    var literalValue: Value? { get }
}

package enum MongoJSONKind<Node: MongoJSON> {
    case null
    case bool(Bool)
    case number(Double, isInteger: Bool)
    case string(String)
    case array([Node])
    case object([(key: String, value: Node)])
}

extension MongoJSON {
    var array: [Self]? { if case .array(let a) = mongo { a } else { nil } }
    var bool: Bool? { if case .bool(let b) = mongo { b } else { nil } }
    var entries: [(key: String, value: Self)]? { if case .object(let e) = mongo { e } else { nil } }
}

extension JSONNode: MongoJSON {
    package var mongo: MongoJSONKind<JSONNode> {
        switch self {
        case .null: .null
        case .bool(let b): .bool(b)
        case .number(let text, let isInteger): .number(Double(text) ?? .nan, isInteger: isInteger && Int64(text) != nil)
        case .string(let s): .string(s)
        case .array(let items): .array(items)
        case .object(let members): .object(members.map { (key: $0.0, value: $0.1) })
        }
    }

    package var literalValue: Value? {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .string(let s): return .string(s)
        case .number(let text, let isInteger): return ExtendedJSON.number(text, isInteger: isInteger)
        case .object: return (try? ExtendedJSON.scalar(self, path: "")) ?? nil
        case .array: return nil
        }
    }
}

/// MongoDB query expressions translated to Atoll's query language, exactly or not at all: App
/// Services' rules (`apply_when`, document filters, partition rules) for `atoll apps import`,
/// and the filters of remote data access (`collection.find(filter:)`), which bind their values
/// as arguments (``arguments``) and name no user placeholders.
///
/// ```swift
/// let p = try MongoExpression.translate(ExportJSON.object([("owner_id", .string("%%user.id"))]))
/// p.text  // "owner_id == %user.id"
/// ```
package struct MongoExpression<Node: MongoJSON> {
    /// Where a filter's literals go as query arguments (`$0`, `$1` …) instead of into the text.
    package final class Arguments {
        package var values: [Value] = []
        package init() {}
    }

    /// Why an expression cannot be translated exactly.
    package typealias Refusal = MongoRefusal

    package typealias Predicate = MongoPredicate

    /// What `%%partition` reads (partition-based rules), nil where it has no meaning.
    var partitionField: String?
    /// Whether `%%user…` placeholders are read (rules); a filter's strings are plain values.
    var placeholders = true
    /// Where literals go when they are bound as arguments; nil: into the text.
    var arguments: Arguments?

    package init(partitionField: String? = nil, placeholders: Bool = true, arguments: Arguments? = nil) {
        self.partitionField = partitionField
        self.placeholders = placeholders
        self.arguments = arguments
    }
}

/// Why a MongoDB expression cannot be translated exactly.
package struct MongoRefusal: Error, Hashable, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// A translated predicate: a constant or query text, with the document fields it reads.
package struct MongoPredicate: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        case constant(Bool)
        case text(String)
    }

    package init(kind: Kind, fields: Set<String> = []) {
        self.kind = kind
        self.fields = fields
    }
    package var kind: Kind
    /// Document fields the predicate reads (key paths); empty when it reads only the user.
    package var fields: Set<String> = []

    package static let yes = MongoPredicate(kind: .constant(true))
    package static let no = MongoPredicate(kind: .constant(false))

    /// As a rule's text: `true`, `false` or the query.
    package var rule: String {
        switch kind {
        case .constant(let b): b ? "true" : "false"
        case .text(let t): t
        }
    }

    package var readsDocument: Bool { !fields.isEmpty }

    /// As an operand of AND/OR/NOT.
    package var operand: String {
        switch kind {
        case .constant(let b): b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .text(let t): "(\(t))"
        }
    }

    package static func and(_ parts: [MongoPredicate]) -> MongoPredicate {
        let fields = parts.reduce(into: Set<String>()) { $0.formUnion($1.fields) }
        if parts.contains(where: { $0.kind == .constant(false) }) { return .no }
        var texts: [MongoPredicate] = []
        for part in parts where part.kind != .constant(true) && !texts.contains(where: { $0.kind == part.kind }) { texts.append(part) }
        if texts.isEmpty { return .yes }
        if texts.count == 1 { return texts[0] }
        return MongoPredicate(kind: .text(texts.map(\.operand).joined(separator: " AND ")), fields: fields)
    }

    package static func or(_ parts: [MongoPredicate]) -> MongoPredicate {
        let fields = parts.reduce(into: Set<String>()) { $0.formUnion($1.fields) }
        if parts.contains(where: { $0.kind == .constant(true) }) { return .yes }
        var texts: [MongoPredicate] = []
        for part in parts where part.kind != .constant(false) && !texts.contains(where: { $0.kind == part.kind }) { texts.append(part) }
        if texts.isEmpty { return .no }
        if texts.count == 1 { return texts[0] }
        return MongoPredicate(kind: .text(texts.map(\.operand).joined(separator: " OR ")), fields: fields)
    }

    package static func not(_ p: MongoPredicate) -> MongoPredicate {
        switch p.kind {
        case .constant(let b): return b ? .no : .yes
        case .text: return MongoPredicate(kind: .text("NOT \(p.operand)"), fields: p.fields)
        }
    }
}

extension MongoExpression {
    package static func translate(_ expression: Node, partitionField: String? = nil) throws(Refusal) -> Predicate {
        try MongoExpression(partitionField: partitionField).predicate(expression)
    }

    package func predicate(_ expression: Node) throws(Refusal) -> Predicate {
        switch expression.mongo {
        case .bool(let b) where placeholders: return b ? .yes : .no
        case .string("%%true") where placeholders: return .yes
        case .string("%%false") where placeholders: return .no
        case .object(let entries):
            var parts: [Predicate] = []
            for (key, value) in entries { parts.append(try clause(key, value)) }
            return .and(parts)
        default:
            throw Refusal("\(Self.describe(expression)) is not \(placeholders ? "a rule expression" : "a query document")")
        }
    }

    private func clause(_ key: String, _ value: Node) throws(Refusal) -> Predicate {
        switch key {
        case "$and", "$or", "$nor":
            guard let items = value.array, !items.isEmpty else { throw Refusal("\(key) needs a non-empty array") }
            var parts: [Predicate] = []
            for item in items { parts.append(try predicate(item)) }
            switch key {
            case "$and": return .and(parts)
            case "$or": return .or(parts)
            default: return .not(.or(parts))
            }
        case "%%true" where placeholders, "%%false" where placeholders:
            guard let b = value.bool else { throw Refusal("\(key) with \(Self.describe(value)) (functions and computed values are not expressible)") }
            return (key == "%%true") == b ? .yes : .no
        default:
            let lhs = try operand(key: key)
            if let entries = value.entries, let first = entries.first?.key, first.hasPrefix("$"),
               !(entries.count == 1 && Self.extendedJSONTypes.contains(first)) {
                var parts: [Predicate] = []
                for (op, argument) in entries { parts.append(try comparison(lhs, op, argument)) }
                return .and(parts)
            }
            if value.entries != nil, value.entries?.first?.key.hasPrefix("%") == true {
                throw Refusal("\(key) compared with \(Self.describe(value)) (expansions such as %function and %stringToOid are not expressible)")
            }
            return try comparison(lhs, "$eq", value)
        }
    }

    /// The left side of a comparison: a document field, a user value or the partition.
    private func operand(key: String) throws(Refusal) -> Predicate {
        if key.hasPrefix("%%"), placeholders {
            if key == "%%partition" {
                guard let partitionField else { throw Refusal("%%partition outside a partition-based sync rule") }
                return Predicate(kind: .text(partitionField))
            }
            // `%%root` is the document: `%%root.members` names the field `members`.
            if key.hasPrefix("%%root.") { return try field(String(key.dropFirst(7)), key: key) }
            return Predicate(kind: .text(try Self.placeholder(key)))
        }
        guard !key.hasPrefix("$"), !key.hasPrefix("%") else { throw Refusal("the operator \(key) is not expressible") }
        return try field(key, key: key)
    }

    private func field(_ path: String, key: String) throws(Refusal) -> Predicate {
        guard Self.isFieldPath(path) else { throw Refusal("the field name \"\(key)\" is not expressible") }
        return Predicate(kind: .text(path), fields: [path])
    }

    private func comparison(_ lhs: Predicate, _ op: String, _ argument: Node) throws(Refusal) -> Predicate {
        let field = lhs.rule
        func make(_ text: String) -> Predicate { Predicate(kind: .text(text), fields: lhs.fields) }
        if placeholders, Self.arrayPlaceholders.contains(field) { return try elementComparison(field, op, argument) }
        // `$ne` as NOT of `==`: on a list field MongoDB's `$ne` holds when no element is equal
        // (Atoll's `!=` through a list is ANY); on a single value the two are the same, null included.
        if op == "$ne" { return .not(make("\(field) == \(try literal(argument))")) }
        let operators = ["$eq": "==", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="]
        if let symbol = operators[op] {
            return make("\(field) \(symbol) \(try literal(argument))")
        }
        switch op {
        case "$in", "$nin":
            if placeholders, case .string(let name) = argument.mongo, name.hasPrefix("%%") {
                let test = try membership(lhs, in: name, op: op)
                return op == "$in" ? test : .not(test)
            }
            guard let items = argument.array else {
                throw Refusal("\(op) with \(Self.describe(argument)) (" + (placeholders
                    ? "a literal array, a %%user value or a %%root field is expressible)" : "only a literal array is expressible)"))
            }
            if items.isEmpty { return op == "$in" ? .no : .yes }
            var values: [String] = []
            for item in items { values.append(try literal(item)) }
            let test = make("\(field) IN {\(values.joined(separator: ", "))}")
            return op == "$in" ? test : .not(test)
        case "$exists":
            guard let exists = argument.bool else { throw Refusal("$exists with \(Self.describe(argument))") }
            // A field of the schema is always there (null when unset): a document "has" it when it
            // is not null. $exists: false is refused everywhere: never more than the source.
            return exists ? make("\(field) != nil") : .no
        default:
            throw Refusal("the operator \(op) is not expressible (supported: $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $nor)")
        }
    }

    /// `lhs IN <array>` where the array is a user value (`{"team": {"$in": "%%user.custom_data.teams"}}`:
    /// the field's value is one of the user's) or a document field (`{"%%user.id": {"$in": "%%root.members"}}`:
    /// the user's id is one of the document's). The user's array is bound as one typed argument
    /// when the rule is applied (``RuleUser/substituting(_:)``); one that is not an array, or too
    /// long, makes the rule hold for no object.
    private func membership(_ lhs: Predicate, in name: String, op: String) throws(Refusal) -> Predicate {
        if name.hasPrefix("%%root.") {
            guard !lhs.readsDocument else {
                throw Refusal("\(op) of the field \(lhs.rule) in the field \(name) (two fields compared) is not expressible")
            }
            let list = try field(String(name.dropFirst(7)), key: name)
            return Predicate(kind: .text("\(lhs.rule) IN \(list.rule)"), fields: list.fields)
        }
        if name == "%%partition" { throw Refusal("\(op) with %%partition (a single value, not an array) is not expressible") }
        return Predicate(kind: .text("\(lhs.rule) IN \(try Self.placeholder(name))"), fields: lhs.fields)
    }

    /// User values that are arrays (one element per identity): a comparison holds when an element
    /// matches, as MongoDB compares a path into an array of documents.
    static var arrayPlaceholders: Set<String> { ["%user.identities.provider_type", "%user.identities.id"] }

    /// `{"%%user.identities.provider_type": "custom-token"}`: `'custom-token' IN %user.identities.provider_type`.
    private func elementComparison(_ list: String, _ op: String, _ argument: Node) throws(Refusal) -> Predicate {
        var items: [Node]
        switch op {
        case "$eq", "$ne": items = [argument]
        case "$in", "$nin":
            guard let array = argument.array else { throw Refusal("\(op) with \(Self.describe(argument)) (only a literal array is expressible here)") }
            items = array
        default:
            throw Refusal("\(op) on \(list.replacingOccurrences(of: "%", with: "%%")) is not expressible (an array: $eq $ne $in $nin only)")
        }
        var parts: [Predicate] = []
        for item in items {
            if case .array = item.mongo { throw Refusal("comparing \(list.replacingOccurrences(of: "%", with: "%%")) with an array is not expressible") }
            if case .string(let s) = item.mongo, Self.arrayPlaceholders.contains("%" + s.dropFirst(2)) {
                throw Refusal("comparing two arrays of the user is not expressible")
            }
            parts.append(Predicate(kind: .text("\(try literal(item)) IN \(list)")))
        }
        let any = Predicate.or(parts)
        return op == "$eq" || op == "$in" ? any : .not(any)
    }

    /// Extended JSON's type wrappers (`{"$oid": …}`): literals, not operators.
    static var extendedJSONTypes: Set<String> { ["$oid", "$numberLong", "$numberInt", "$numberDouble", "$numberDecimal", "$uuid", "$date", "$binary"] }

    /// A value as a query literal, or a user placeholder; with ``arguments``, as an argument.
    private func literal(_ value: Node) throws(Refusal) -> String {
        if let arguments {
            if case .array = value.mongo { throw Refusal("comparing with \(Self.describe(value)) (arrays) is not expressible") }
            guard let typed = value.literalValue, !(typed.isMapOrObject) else {
                throw Refusal("comparing with \(Self.describe(value)) (documents and unknown Extended JSON) is not expressible")
            }
            if case .double(let d) = typed, !d.isFinite { throw Refusal("the number \(d) is not expressible") }
            arguments.values.append(typed)
            return "$\(arguments.values.count - 1)"
        }
        switch value.mongo {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d, let isInteger):
            if isInteger, let i = Int64(exactly: d) { return String(i) }
            guard d.isFinite else { throw Refusal("the number \(d) is not expressible") }
            return String(d)
        case .string(let s):
            if s == "%%partition", let partitionField { return partitionField }
            if s.hasPrefix("%%") { return try Self.placeholder(s) }
            return Self.quoted(s)
        case .object(let entries) where entries.count == 1:
            let (key, inner) = entries[0]
            switch (key, inner.mongo) {
            case ("$oid", .string(let hex)) where hex.count == 24 && hex.allSatisfy(\.isHexDigit): return "oid(\(hex))"
            case ("$numberLong", .string(let t)), ("$numberInt", .string(let t)): if let i = Int64(t) { return String(i) }
            case ("$numberDouble", .string(let t)): if let d = Double(t), d.isFinite { return String(d) }
            case ("$uuid", .string(let t)): if t.count == 36 { return "uuid(\(t))" }
            default: break
            }
            throw Refusal("the value \(Self.describe(value)) is not expressible")
        default:
            throw Refusal("comparing with \(Self.describe(value)) (documents and arrays) is not expressible")
        }
    }

    /// `%%user.id` → `%user.id`; `%%user.custom_data.*` and `%%user.data.*` likewise. Others are refused.
    package static func placeholder(_ text: String) throws(Refusal) -> String {
        let name = String(text.dropFirst(2))
        if name == "user.id" { return "%user.id" }
        if name == "user.identities.provider_type" || name == "user.identities.id" { return "%" + name }
        if name.hasPrefix("user.identities") {
            throw Refusal("\(text) is not expressible (of the identities, %%user.identities.provider_type and %%user.identities.id are)")
        }
        for prefix in ["user.custom_data.", "user.data."] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            if !rest.isEmpty, isFieldPath(String(rest)) { return "%" + name }
        }
        throw Refusal("\(text) is not expressible (supported: %%user.id, %%user.custom_data.*, %%user.data.*, %%user.identities.provider_type, %%user.identities.id, %%true, %%false)")
    }

    package static func isFieldPath(_ text: String) -> Bool {
        MongoPredicate.isFieldPath(text)
    }

    static func quoted(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// A short rendering of a JSON value for the report.
    package static func describe(_ value: Node) -> String {
        switch value.mongo {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let d, let isInteger): return isInteger ? (Int64(exactly: d).map { String($0) } ?? String(d)) : String(d)
        case .string(let s): return "\"\(s.prefix(40))\""
        case .array(let items): return "[" + items.prefix(3).map(describe).joined(separator: ", ") + (items.count > 3 ? ", …" : "") + "]"
        case .object(let entries): return "{" + entries.prefix(2).map { "\"\($0.key.prefix(40))\": \(describe($0.value))" }.joined(separator: ", ") + (entries.count > 2 ? ", …" : "") + "}"
        }
    }
}

extension MongoPredicate {
    /// A dotted path of names (`address.city`), each a letter or `_` then letters, digits, `_`.
    package static func isFieldPath(_ text: String) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let first = part.first, first.isLetter || first == "_" else { return false }
            return part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        }
    }
}

extension Value {
    var isMapOrObject: Bool {
        switch self {
        case .map, .object, .list, .set: true
        default: false
        }
    }
}
