import Foundation

/// One token of query text.
struct QueryToken: Sendable {
    enum Placeholder: Equatable, Sendable {
        /// `%@`
        case any
        /// `%d`
        case integer
        /// `%f`
        case double
        /// `%K`
        case keyPath
        /// `$0`, `$1`, …
        case positional(Int)
    }

    enum Kind: Equatable, Sendable {
        /// A name: a property, or a keyword (keywords are told apart by the parser, ignoring case).
        case identifier(String)
        case integer(Int64)
        case float(Double)
        case string(String)
        /// `oid(…)`, `uuid(…)`, `decimal128(…)`, `T…` dates and `B64"…"` data.
        case constant(Value)
        case placeholder(Placeholder)
        /// `@count`, `@sum`, `@links`, … (lowercased).
        case collectionOperator(String)
        /// `$x`: a `SUBQUERY` variable (the name without `$`).
        case variable(String)
        /// Operators and punctuation: `==`, `(`, `,`, …
        case symbol(String)
        case end
    }

    var kind: Kind
    var range: SourceRange
    /// The token as written.
    var text: String

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = kind { return name.uppercased() == word }
        return false
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }

    /// How errors name this token: `'text'`, or "end of query".
    var quotedText: String {
        switch kind {
        case .end: "end of query"
        case .string: text
        default: "'\(text)'"
        }
    }
}

/// Splits query text into tokens, remembering where each one is.
struct QueryLexer {
    private let chars: [Character]
    private var position = 0
    private let lineStarts: [Int]

    init(_ text: String) {
        chars = Array(text)
        var starts = [0]
        for (i, c) in chars.enumerated() where c.isNewline { starts.append(i + 1) }
        lineStarts = starts
    }

    /// All tokens, ending with `.end`.
    static func tokenize(_ text: String) throws(QueryError) -> [QueryToken] {
        var lexer = QueryLexer(text)
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    func range(_ start: Int, _ end: Int) -> SourceRange {
        // The last line starting at or before `start`, by binary search: a linear scan per token would
        // make a query of many short lines quadratic.
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = low + (high - low + 1) / 2
            if lineStarts[mid] <= start { low = mid } else { high = mid - 1 }
        }
        let line = low
        return SourceRange(offset: start, length: end - start, line: line + 1, column: start - lineStarts[line] + 1)
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        position + ahead < chars.count ? chars[position + ahead] : nil
    }

    private func token(_ kind: QueryToken.Kind, from start: Int) -> QueryToken {
        QueryToken(kind: kind, range: range(start, position), text: String(chars[start..<position]))
    }

    private func error(_ message: String, from start: Int, to end: Int? = nil) -> QueryError {
        QueryError(.syntaxError, message, at: range(start, end ?? max(position, start + 1)))
    }

    mutating func next() throws(QueryError) -> QueryToken {
        while let c = peek(), c.isWhitespace { position += 1 }
        let start = position
        guard let c = peek() else { return token(.end, from: start) }

        if c == "T", let date = try lexDate() { return token(.constant(.date(date)), from: start) }
        if c == "B", peek(1) == "6", peek(2) == "4", peek(3) == "\"" || peek(3) == "'" {
            position += 3
            let text = try lexString()
            guard let data = Data(base64Encoded: text) else {
                throw error("invalid base64 data in B64 literal", from: start)
            }
            return token(.constant(.data(data)), from: start)
        }
        if c.isLetter || c == "_" {
            while let d = peek(), d.isLetter || d.isNumber || d == "_" { position += 1 }
            let word = String(chars[start..<position])
            if peek() == "(", ["oid", "uuid", "decimal128"].contains(word.lowercased()) {
                let value = try lexTypedConstant(word.lowercased(), from: start)
                return token(.constant(value), from: start)
            }
            return token(.identifier(word), from: start)
        }
        if c.isASCII && c.isNumber || (c == "-" && peek(1)?.isASCII == true && peek(1)?.isNumber == true) {
            return try lexNumber(from: start)
        }
        if c == "\"" || c == "'" {
            let text = try lexString()
            return token(.string(text), from: start)
        }
        if c == "%" { return try lexPercentPlaceholder(from: start) }
        if c == "$" {
            position += 1
            if let d = peek(), d == "_" || d.isLetter {
                while let d = peek(), d == "_" || d.isLetter || d.isNumber { position += 1 }
                return token(.variable(String(chars[start + 1..<position])), from: start)
            }
            while let d = peek(), d.isASCII && d.isNumber { position += 1 }
            guard position > start + 1, let index = Int(String(chars[start + 1..<position])) else {
                throw error("expected an argument number after '$'", from: start)
            }
            return token(.placeholder(.positional(index)), from: start)
        }
        if c == "@" {
            position += 1
            while let d = peek(), d.isLetter { position += 1 }
            let word = String(chars[start..<position]).lowercased()
            guard ["@count", "@size", "@sum", "@avg", "@min", "@max", "@keys", "@values", "@links", "@type"].contains(word) else {
                throw error("unknown collection operator '\(String(chars[start..<position]))'; use @count, "
                    + "@size, @sum, @avg, @min, @max, @keys, @values, @links or @type", from: start)
            }
            return token(.collectionOperator(word), from: start)
        }
        for symbol in ["==", "!=", "<>", "<=", ">=", "&&", "||"] where matches(symbol) {
            position += 2
            return token(.symbol(symbol), from: start)
        }
        if "=<>!(){}[],.*".contains(c) {
            position += 1
            return token(.symbol(String(c)), from: start)
        }
        throw error("unexpected character '\(c)'", from: start)
    }

    private func matches(_ symbol: String) -> Bool {
        symbol.enumerated().allSatisfy { peek($0.offset) == $0.element }
    }

    private mutating func lexNumber(from start: Int) throws(QueryError) -> QueryToken {
        if peek() == "-" { position += 1 }
        func digits() { while let d = peek(), d.isASCII && d.isNumber { position += 1 } }
        digits()
        var isFloat = false
        if peek() == ".", let d = peek(1), d.isASCII && d.isNumber {
            isFloat = true
            position += 1
            digits()
        }
        if peek() == "e" || peek() == "E" {
            let sign = peek(1) == "+" || peek(1) == "-" ? 1 : 0
            if let d = peek(1 + sign), d.isASCII && d.isNumber {
                isFloat = true
                position += 1 + sign
                digits()
            }
        }
        let text = String(chars[start..<position])
        if isFloat {
            guard let value = Double(text) else { throw error("invalid number '\(text)'", from: start) }
            return token(.float(value), from: start)
        }
        guard let value = Int64(text) else {
            throw error("integer literal '\(text)' does not fit in 64 bits", from: start)
        }
        return token(.integer(value), from: start)
    }

    private mutating func lexPercentPlaceholder(from start: Int) throws(QueryError) -> QueryToken {
        position += 1
        let kind: QueryToken.Placeholder
        switch peek() {
        case "@": kind = .any
        case "d": kind = .integer
        case "f": kind = .double
        case "K": kind = .keyPath
        default:
            throw error("unknown placeholder '%\(peek().map(String.init) ?? "")'; use %@, %d, %f or %K",
                        from: start, to: min(position + 1, chars.count))
        }
        position += 1
        return token(.placeholder(kind), from: start)
    }

    /// A quoted string at `position`, with its escapes resolved.
    private mutating func lexString() throws(QueryError) -> String {
        let start = position
        let quote = chars[position]
        position += 1
        var out = ""
        while let c = peek() {
            position += 1
            if c == quote { return out }
            guard c == "\\" else { out.append(c); continue }
            let escapeStart = position - 1
            guard let e = peek() else { break }
            position += 1
            switch e {
            case "\\", "\"", "'", "/": out.append(e)
            case "n": out.append("\n")
            case "r": out.append("\r")
            case "t": out.append("\t")
            case "0": out.append("\0")
            case "u":
                let hex = (0..<4).compactMap { peek($0) }
                guard hex.count == 4, let code = UInt32(String(hex), radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw error("invalid escape sequence in string: '\\u' needs 4 hex digits", from: escapeStart,
                                to: min(escapeStart + 6, chars.count))
                }
                position += 4
                out.unicodeScalars.append(scalar)
            default:
                throw error("invalid escape sequence '\\\(e)' in string", from: escapeStart, to: position)
            }
        }
        throw error("unterminated string", from: start, to: start + 1)
    }

    /// `oid(…)`, `uuid(…)` or `decimal128(…)`; `position` is at the `(`.
    private mutating func lexTypedConstant(_ kind: String, from start: Int) throws(QueryError) -> Value {
        position += 1
        let contentStart = position
        while let c = peek(), c != ")" { position += 1 }
        guard peek() == ")" else { throw error("expected ')' to close '\(kind)('", from: start) }
        let content = String(chars[contentStart..<position]).trimmingCharacters(in: .whitespaces)
        position += 1
        switch kind {
        case "oid":
            guard let oid = try? ObjectId(string: content) else {
                throw error("'\(content)' is not a valid ObjectId", from: start)
            }
            return .objectId(oid)
        case "uuid":
            guard let uuid = UUID(uuidString: content) else {
                throw error("'\(content)' is not a valid UUID", from: start)
            }
            return .uuid(uuid)
        default:
            guard let decimal = try? Decimal128(string: content) else {
                throw error("'\(content)' is not a valid Decimal128", from: start)
            }
            return .decimal(decimal)
        }
    }

    /// `T<seconds>:<nanoseconds>` or `TYYYY-MM-DD@HH:MM:SS[:nanoseconds]` (UTC). Returns `nil`, leaving
    /// `position` alone, when the text is not a date (a property named `T1`, say).
    private mutating func lexDate() throws(QueryError) -> Date? {
        var p = position + 1
        func number(maxDigits: Int = 19, signed: Bool = false) -> (value: Int64, digits: Int)? {
            var text = ""
            if signed, p < chars.count, chars[p] == "-" { text.append("-"); p += 1 }
            var count = 0
            while p < chars.count, chars[p].isASCII, chars[p].isNumber, count < maxDigits {
                text.append(chars[p]); p += 1; count += 1
            }
            guard count > 0, let value = Int64(text) else { return nil }
            return (value, count)
        }
        func take(_ c: Character) -> Bool {
            guard p < chars.count, chars[p] == c else { return false }
            p += 1
            return true
        }
        func ends() -> Bool { p >= chars.count || !(chars[p].isLetter || chars[p].isNumber || chars[p] == "_") }

        guard let first = number(signed: true) else { return nil }
        if first.digits == 4, take("-") {
            guard let month = number(maxDigits: 2), take("-"), let day = number(maxDigits: 2),
                  take("@") || take("T"), let hour = number(maxDigits: 2), take(":"),
                  let minute = number(maxDigits: 2), take(":"), let second = number(maxDigits: 2) else { return nil }
            var nanos: Int64 = 0
            if take(":") { guard let n = number() else { return nil }; nanos = n.value }
            guard ends() else { return nil }
            guard (1...12).contains(month.value), (1...31).contains(day.value), hour.value < 24,
                  minute.value < 60, second.value < 61, nanos < 1_000_000_000 else {
                throw error("invalid date '\(String(chars[position..<p]))'", from: position, to: p)
            }
            let days = Self.daysFromCivil(year: first.value, month: month.value, day: day.value)
            let seconds = days * 86_400 + hour.value * 3_600 + minute.value * 60 + second.value
            position = p
            return Date(seconds: seconds, nanoseconds: nanos)
        }
        guard take(":"), let nanos = number(signed: true), ends() else { return nil }
        position = p
        return Date(seconds: first.value, nanoseconds: nanos.value)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    /// (Also what `$date` strings are read with, ExtendedJSON.parseISODate.)
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
