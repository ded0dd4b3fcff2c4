import AtollCore
import Foundation

extension ExtendedJSON {
    /// The canonical extended JSON of a BSON value: every number keeps its BSON type
    /// (`{"$numberInt": "1"}`, `{"$numberLong": "1"}`, `{"$numberDouble": "1.5"}`), so what a
    /// function receives is what the caller passed.
    static func canonical(_ bson: AnyBSON?) -> ExtendedJSON {
        guard let bson else { return .null }
        switch bson {
        case .int32(let v): return .object(["$numberInt": .string(String(v))])
        case .int64(let v): return .object(["$numberLong": .string(String(v))])
        case .double(let v):
            let text = v.isNaN ? "NaN" : v.isInfinite ? (v > 0 ? "Infinity" : "-Infinity") : shortest(v)
            return .object(["$numberDouble": .string(text)])
        case .document(let fields): return .object(fields.mapValues(canonical))
        case .array(let items): return .array(items.map(canonical))
        case .uuid(let u):
            let bytes = withUnsafeBytes(of: u.uuid) { Data($0) }
            return .object(["$binary": .object(["base64": .string(bytes.base64EncodedString()), "subType": .string("04")])])
        default: return ExtendedJSON(bson)
        }
    }

    /// `1.0` as "1.0", `0.1` as "0.1": the shortest text that reads back as the same double.
    private static func shortest(_ value: Double) -> String {
        let text = "\(value)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// A BSON value as canonical extended JSON text.
    static func canonicalData(_ bson: AnyBSON) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(canonical(bson))
    }
}
