import Foundation

extension ExtendedJSON {
    /// An object as one line of canonical Extended JSON v2 (what `mongoexport --jsonFormat=canonical`
    /// writes): its primary key first as `_id`'s name says, then the other fields in schema order;
    /// links as their target's primary key, embedded objects as documents.
    ///
    /// ```swift
    /// ExtendedJSON.canonical(fields, of: schema["Task"]!, schema: schema)   // {"_id":{"$oid":"…"},"title":"…"}
    /// ```
    package static func canonical(_ fields: [String: Value], of type: ObjectSchema, schema: [String: ObjectSchema]) -> String {
        var out = "{"
        var first = true
        let ordered = type.properties.filter(\.isPrimaryKey) + type.properties.filter { !$0.isPrimaryKey }
        for property in ordered {
            let value = fields[property.name] ?? defaultValue(property)
            if !first { out += "," }
            first = false
            out += quoted(property.name) + ":" + canonical(value, schema: schema)
        }
        return out + "}"
    }

    static func defaultValue(_ property: Property) -> Value {
        switch property.collection {
        case .single: property.initialValue
        case .list: .list([])
        case .set: .set([])
        case .map: .map([:])
        }
    }

    /// One value in canonical Extended JSON v2.
    package static func canonical(_ value: Value, schema: [String: ObjectSchema]) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i):
            return Int32(exactly: i) != nil ? #"{"$numberInt":"\#(i)"}"# : #"{"$numberLong":"\#(i)"}"#
        case .double(let d): return #"{"$numberDouble":"\#(doubleText(d))"}"#
        case .float(let f): return #"{"$numberDouble":"\#(doubleText(Double(f)))"}"#
        case .string(let s): return quoted(s)
        case .data(let d): return #"{"$binary":{"base64":"\#(d.base64EncodedString())","subType":"00"}}"#
        case .date(let date):
            return #"{"$date":{"$numberLong":"\#(Int64((date.timeIntervalSince1970 * 1000).rounded()))"}}"#
        case .objectId(let o): return #"{"$oid":"\#(o.stringValue)"}"#
        case .uuid(let u):
            let bytes = withUnsafeBytes(of: u.uuid) { Data($0) }
            return #"{"$binary":{"base64":"\#(bytes.base64EncodedString())","subType":"04"}}"#
        case .decimal(let d): return #"{"$numberDecimal":"\#(d.stringValue)"}"#
        case .link(let link): return canonical(link.primaryKey, schema: schema)
        case .object(let fields):
            // An embedded object: its schema is not known from the value alone, so fields are sorted.
            return "{" + fields.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + canonical($0.value, schema: schema) }.joined(separator: ",") + "}"
        case .list(let items), .set(let items): return "[" + items.map { canonical($0, schema: schema) }.joined(separator: ",") + "]"
        case .map(let entries):
            return "{" + entries.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + canonical($0.value, schema: schema) }.joined(separator: ",") + "}"
        }
    }

    /// A double as canonical Extended JSON spells it: `Infinity`, `-Infinity`, `NaN`, else a
    /// round-tripping decimal with a fraction or exponent.
    static func doubleText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        let text = "\(d)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// A JSON string literal.
    package static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 2)
        appendQuoted(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `s` as a JSON string literal, in UTF-8: `"`, `\` and control characters escaped,
    /// everything else (multi-byte sequences included) copied as it is.
    package static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case ..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
