import Foundation

// Printing an AST back as query text that parses to an equal AST (used for sync subscriptions).
// Arguments are printed as literals. Link and embedded-object constants have no literal form.

extension QueryExpression: CustomStringConvertible {
    package var description: String {
        ([predicate.description] + clauses.map(\.description)).joined(separator: " ")
    }
}

extension QueryPredicate: CustomStringConvertible {
    package var description: String {
        switch kind {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison): return comparison.description
        case .not(let operand):
            if case .comparison = operand.kind { return "NOT " + operand.description }
            if case .constant = operand.kind { return "NOT " + operand.description }
            // No parentheses: they would add a nesting level the text did not have.
            if case .not = operand.kind { return "NOT " + operand.description }
            return "NOT (" + operand.description + ")"
        case .and:
            // A chain prints flat, whatever its grouping (equality treats AND and OR as associative);
            // only operands of lower precedence are parenthesized.
            return chainOperands(and: true).map { $0.printed(within: 2) }.joined(separator: " AND ")
        case .or:
            return chainOperands(and: false).map { $0.printed(within: 1) }.joined(separator: " OR ")
        }
    }

    private var precedence: Int {
        switch kind {
        case .or: 1
        case .and: 2
        default: 3
        }
    }

    /// Parenthesized when needed to parse back as the same tree.
    private func printed(within parent: Int) -> String {
        precedence < parent ? "(" + description + ")" : description
    }
}

extension QueryComparison: CustomStringConvertible {
    package var description: String {
        var text = quantifier.map { $0.rawValue + " " } ?? ""
        text += lhs.description + " " + op.rawValue
        if !options.isEmpty {
            text += "[" + (options.contains(.caseInsensitive) ? "c" : "")
                + (options.contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
        return text + " " + rhs.description
    }
}

extension QueryOperand: CustomStringConvertible {
    package var description: String {
        switch kind {
        case .keyPath(let path): path.description
        case .value(let value): QueryLiteral.text(for: value)
        case .subquery(let subquery):
            "SUBQUERY(\(subquery.collection), $\(subquery.variable), \(subquery.predicate)).@count"
        case .geometry(let shape): shape.description
        }
    }
}

extension QueryKeyPath: CustomStringConvertible {
    package var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key, .index, .allElements: text += Self.name(of: component)
            default:
                if !text.isEmpty { text += "." }
                text += Self.name(of: component)
            }
        }
        return text
    }

    static func name(of component: Component) -> String {
        switch component {
        case .property(let name): name
        case .key(let key): "[" + QueryLiteral.quoted(key, quote: "'") + "]"
        case .index(let index): "[\(index)]"
        case .allElements: "[*]"
        case .count: "@count"
        case .size: "@size"
        case .sum: "@sum"
        case .average: "@avg"
        case .minimum: "@min"
        case .maximum: "@max"
        case .keys: "@keys"
        case .values: "@values"
        case .type: "@type"
        case .links(let type, let property): "@links.\(type).\(property)"
        case .allLinks: "@links"
        case .variable(let name): "$" + name
        }
    }
}

extension QueryClause: CustomStringConvertible {
    package var description: String {
        switch self {
        case .sort(let keys):
            "SORT(" + keys.map { $0.keyPath.description + ($0.ascending ? " ASC" : " DESC") }
                .joined(separator: ", ") + ")"
        case .distinct(let paths): "DISTINCT(" + paths.map(\.description).joined(separator: ", ") + ")"
        case .limit(let count): "LIMIT(\(count))"
        }
    }
}

/// Literal spellings of constants in query text.
enum QueryLiteral {
    static func text(for value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .float(let f): return number(Double(f))
        case .string(let s): return quoted(s, quote: "\"")
        case .data(let d): return "B64\"" + d.base64EncodedString() + "\""
        case .date(let date): return dateText(date)
        case .objectId(let o): return "oid(" + o.stringValue + ")"
        case .uuid(let u): return "uuid(" + u.uuidString.lowercased() + ")"
        case .decimal(let d): return "decimal128(" + d.description + ")"
        case .list(let items), .set(let items): return "{" + items.map(text(for:)).joined(separator: ", ") + "}"
        case .link, .object, .map: return value.description
        }
    }

    static func number(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-1e999" : "1e999" }
        let text = String(d)
        return text.contains(where: { ".eE".contains($0) }) ? text : text + ".0"
    }

    /// `T<seconds>:<nanoseconds>`, with whole seconds rounded down and nanoseconds in 0..<1e9;
    /// parsed back it is `==` to the date (see ``Foundation/Date/timestamp``).
    static func dateText(_ date: Date) -> String {
        let (seconds, nanos) = date.timestamp
        return "T\(seconds):\(nanos)"
    }

    static func quoted(_ s: String, quote: Character) -> String {
        var out = String(quote)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\"" where quote == "\"": out += "\\\""
            case "'" where quote == "'": out += "\\'"
            default:
                if scalar.value < 0x20 {
                    out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out.append(quote)
        return out
    }
}
