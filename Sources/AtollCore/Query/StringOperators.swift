/// The string comparisons of the query language. The evaluator calls ``evaluate(_:_:_:caseInsensitive:)``
/// directly and SQL calls it through the `atoll_string_op` function (see ``QueryFunctions``), so both
/// give the same answers by construction.
///
/// Strings are compared by Unicode scalars, as SQLite compares UTF-8 text; `[c]` lowercases both sides
/// first (Unicode-aware, `"ÄB".lowercased() == "äb"`).
public enum StringOperator: String, Sendable, Hashable, CaseIterable {
    /// Equality; used for `==[c]` and `!=[c]`.
    case equal = "=="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    /// `*` matches any run of characters (also none), `?` exactly one.
    case like = "LIKE"

    /// Applies `op` to two optional strings. `nil` never matches, except that two `nil`s are `==`.
    ///
    /// ```swift
    /// StringOperator.evaluate(.like, "Frodo", "fr*o", caseInsensitive: true)   // true
    /// ```
    public static func evaluate(_ op: StringOperator, _ lhs: String?, _ rhs: String?, caseInsensitive: Bool) -> Bool {
        guard let lhs, let rhs else { return op == .equal && lhs == nil && rhs == nil }
        let text = scalars(lhs, caseInsensitive), pattern = scalars(rhs, caseInsensitive)
        switch op {
        case .equal: return text == pattern
        case .beginsWith: return text.starts(with: pattern)
        case .endsWith: return text.count >= pattern.count && Array(text.suffix(pattern.count)) == pattern
        case .contains: return contains(text, pattern)
        case .like: return like(text, pattern)
        }
    }

    static func scalars(_ s: String, _ caseInsensitive: Bool) -> [Unicode.Scalar] {
        Array((caseInsensitive ? s.lowercased() : s).unicodeScalars)
    }

    private static func contains(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        if pattern.isEmpty { return true }
        guard text.count >= pattern.count else { return false }
        for start in 0...(text.count - pattern.count) where text[start] == pattern[0] {
            if text[start..<start + pattern.count].elementsEqual(pattern) { return true }
        }
        return false
    }

    /// Wildcard match with backtracking to the last `*`: O(text × pattern) at worst.
    private static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var t = 0, p = 0
        var star: Int?, resume = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t])) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                star = p
                resume = t
                p += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
