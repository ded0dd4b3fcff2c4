import Foundation

/// The string comparisons of the query language. The evaluator calls ``evaluate(_:_:_:caseInsensitive:)``
/// directly and SQL calls it through the `atoll_string_op` function (see ``QueryFunctions``), so both
/// give the same answers by construction.
///
/// Strings are compared by Unicode scalars, as SQLite compares UTF-8 text; `[c]` lowercases both sides
/// first (Unicode-aware, `"ÄB".lowercased() == "äb"`).
package enum StringOperator: String, Sendable, Hashable, CaseIterable {
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
    package static func evaluate(_ op: StringOperator, _ lhs: String?, _ rhs: String?, caseInsensitive: Bool) -> Bool {
        evaluate(op, lhs, rhs, options: caseInsensitive ? .caseInsensitive : [])
    }

    /// Applies `op` to two optional strings with `[c]` and `[d]`: `[c]` lowercases both sides, `[d]`
    /// decomposes them canonically (NFD) and drops the combining marks (`"Éloïse"` → `"Eloise"`).
    package static func evaluate(_ op: StringOperator, _ lhs: String?, _ rhs: String?, options: QueryStringOptions) -> Bool {
        guard let lhs, let rhs else { return op == .equal && lhs == nil && rhs == nil }
        return match(op, scalars(lhs, options), scalars(rhs, options), star: "*", one: "?")
    }

    /// Applies `op` to two optional byte strings: byte by byte (`*` and `?` are the bytes 0x2A and
    /// 0x3F for `LIKE`); with `[c]` or `[d]`, both sides are read as UTF-8 text first.
    package static func evaluate(_ op: StringOperator, bytes lhs: Data?, _ rhs: Data?, options: QueryStringOptions) -> Bool {
        guard let lhs, let rhs else { return op == .equal && lhs == nil && rhs == nil }
        if !options.isEmpty {
            return evaluate(op, String(decoding: lhs, as: UTF8.self), String(decoding: rhs, as: UTF8.self), options: options)
        }
        return match(op, Array(lhs), Array(rhs), star: 0x2A, one: 0x3F)
    }

    static func scalars(_ s: String, _ caseInsensitive: Bool) -> [Unicode.Scalar] {
        scalars(s, caseInsensitive ? .caseInsensitive : [])
    }

    static func scalars(_ s: String, _ options: QueryStringOptions) -> [Unicode.Scalar] {
        var text = options.contains(.caseInsensitive) ? s.lowercased() : s
        if options.contains(.diacriticInsensitive) {
            text = text.decomposedStringWithCanonicalMapping
            return text.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }
        }
        return Array(text.unicodeScalars)
    }

    private static func match<E: Equatable>(_ op: StringOperator, _ text: [E], _ pattern: [E], star: E, one: E) -> Bool {
        switch op {
        case .equal: return text == pattern
        case .beginsWith: return text.starts(with: pattern)
        case .endsWith: return text.count >= pattern.count && Array(text.suffix(pattern.count)) == pattern
        case .contains: return contains(text, pattern)
        case .like: return like(text, pattern, star: star, one: one)
        }
    }

    private static func contains<E: Equatable>(_ text: [E], _ pattern: [E]) -> Bool {
        if pattern.isEmpty { return true }
        guard text.count >= pattern.count else { return false }
        for start in 0...(text.count - pattern.count) where text[start] == pattern[0] {
            if text[start..<start + pattern.count].elementsEqual(pattern) { return true }
        }
        return false
    }

    /// Wildcard match with backtracking to the last `*`: O(text × pattern) at worst.
    private static func like<E: Equatable>(_ text: [E], _ pattern: [E], star wildcard: E, one: E) -> Bool {
        var t = 0, p = 0
        var star: Int?, resume = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == one || (pattern[p] != wildcard && pattern[p] == text[t])) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == wildcard {
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
        while p < pattern.count && pattern[p] == wildcard { p += 1 }
        return p == pattern.count
    }
}
