/// MongoDB update documents applied to a document in Extended JSON: `$set`, `$unset`, `$inc`,
/// `$push` (with `$each`). Pure; paths are field names, dots reaching into embedded documents.
///
/// ```swift
/// let after = try RemoteUpdate.apply(update, to: document, primaryKey: "_id")
/// ```
package enum RemoteUpdate {
    package static let operators: Set<String> = ["$set", "$unset", "$inc", "$push"]

    /// Whether `update` is an update document (operators only) rather than a replacement.
    package static func isOperatorDocument(_ update: JSONNode) -> Bool {
        guard case .object(let members) = update, let first = members.first else { return false }
        return first.0.hasPrefix("$")
    }

    /// `document` with `update`'s operators applied in order.
    /// - Throws: `unsupported` for another operator or a path into an array, `badRequest` for a
    ///   malformed operand, a change to `primaryKey`, or `$inc` of a value that is not a number.
    package static func apply(_ update: JSONNode, to document: JSONNode, primaryKey: String) throws(RemoteError) -> JSONNode {
        guard case .object(let operations) = update, !operations.isEmpty else {
            throw RemoteError(.badRequest, "an update is a document of operators ($set, $unset, $inc, $push)")
        }
        var out = document
        for (op, operand) in operations {
            guard operators.contains(op) else {
                throw RemoteError(op.hasPrefix("$") ? .unsupported : .badRequest,
                                  "the update operator \(op.prefix(40)) (supported: $set $unset $inc $push; a replacement needs findOneAndReplace)")
            }
            guard case .object(let fields) = operand else { throw RemoteError(.badRequest, "\(op) takes a document of fields") }
            for (path, value) in fields {
                let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard MongoPredicate.isFieldPath(path) else {
                    throw RemoteError(.unsupported, "the path \(path.prefix(60)) (field names, dots into embedded documents)")
                }
                guard parts[0] != primaryKey else { throw RemoteError(.badRequest, "\(primaryKey) cannot change") }
                switch op {
                case "$set": out = try setting(parts[...], to: value, in: out)
                case "$unset": out = try setting(parts[...], to: nil, in: out)
                case "$inc":
                    let current = Self.value(at: parts[...], in: out)
                    out = try setting(parts[...], to: try increment(current, by: value, path: path), in: out)
                default:
                    let current = Self.value(at: parts[...], in: out)
                    var items: [JSONNode]
                    switch current {
                    case nil, .null?: items = []
                    case .array(let existing)?: items = existing
                    default: throw RemoteError(.badRequest, "$push to \(path.prefix(60)), which is not an array")
                    }
                    if case .object(let members) = value, members.first?.0 == "$each" {
                        guard members.count == 1, case .array(let each) = members[0].1 else {
                            throw RemoteError(.unsupported, "$push with modifiers other than $each")
                        }
                        items += each
                    } else {
                        items.append(value)
                    }
                    out = try setting(parts[...], to: .array(items), in: out)
                }
            }
        }
        return out
    }

    static func value(at path: ArraySlice<String>, in node: JSONNode) -> JSONNode? {
        guard let first = path.first, case .object(let members) = node,
              let found = members.first(where: { $0.0 == first })?.1 else { return nil }
        return path.count == 1 ? found : value(at: path.dropFirst(), in: found)
    }

    /// `node` with the value at `path` set (nil: removed); missing documents on the way are made.
    static func setting(_ path: ArraySlice<String>, to newValue: JSONNode?, in node: JSONNode) throws(RemoteError) -> JSONNode {
        guard let first = path.first else { return newValue ?? .null }
        var members: [(String, JSONNode)]
        switch node {
        case .object(let m): members = m
        case .null: members = []
        default: throw RemoteError(.unsupported, "a path through \(first.prefix(40)), which is not a document")
        }
        let index = members.firstIndex { $0.0 == first }
        if path.count == 1 {
            if let newValue {
                if let index { members[index].1 = newValue } else { members.append((first, newValue)) }
            } else if let index {
                members[index].1 = .null
            }
            return .object(members)
        }
        let inner = index.map { members[$0].1 } ?? .null
        let changed = try setting(path.dropFirst(), to: newValue, in: inner)
        if let index { members[index].1 = changed } else { members.append((first, changed)) }
        return .object(members)
    }

    static func increment(_ current: JSONNode?, by amount: JSONNode, path: String) throws(RemoteError) -> JSONNode {
        let base: Value = current.flatMap(\.literalValue).flatMap { $0 == .null ? nil : $0 } ?? .int(0)
        guard let step = amount.literalValue else { throw RemoteError(.badRequest, "$inc of \(path.prefix(60)) by a value that is not a number") }
        switch (base, step) {
        case (.int(let a), .int(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            guard !overflow else { throw RemoteError(.badRequest, "$inc of \(path.prefix(60)) overflows") }
            return .object([("$numberLong", .string(String(sum)))])
        default:
            guard let a = base.numericDouble, let b = step.numericDouble, base.isNumber, step.isNumber else {
                throw RemoteError(.badRequest, "$inc of \(path.prefix(60)), which is not a number, or by a value that is not one")
            }
            let sum = a + b
            guard sum.isFinite else { throw RemoteError(.badRequest, "$inc of \(path.prefix(60)) overflows") }
            return .object([("$numberDouble", .string("\(sum)"))])
        }
    }
}

extension Value {
    var isNumber: Bool {
        switch self {
        case .int, .double, .float: true
        default: false
        }
    }
}
