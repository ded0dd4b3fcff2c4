import AtollCore
import Foundation

/// MongoDB extended JSON, the form BSON values travel in over HTTP: custom user data in access
/// tokens, reset function arguments.
enum ExtendedJSON: Codable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([ExtendedJSON])
    case object([String: ExtendedJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ExtendedJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ExtendedJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let v): try container.encode(v)
        case .int(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .array(let v): try container.encode(v)
        case .object(let v): try container.encode(v)
        }
    }

    /// The BSON value this extended JSON stands for (`{"$oid": …}` is an ObjectId, and so on).
    var bson: AnyBSON {
        switch self {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .int(let v): return .int64(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .array(let items): return .array(items.map(\.bson))
        case .object(let fields):
            if fields.count == 1, let first = fields.first, first.key.hasPrefix("$"), let special = Self.special(first.key, first.value) {
                return special
            }
            return .document(fields.mapValues(\.bson))
        }
    }

    private static func special(_ key: String, _ value: ExtendedJSON) -> AnyBSON? {
        switch (key, value) {
        case ("$oid", .string(let hex)): return (try? ObjectId(string: hex)).map(AnyBSON.objectId)
        case ("$numberLong", .string(let text)): return Int64(text).map(AnyBSON.int64)
        case ("$numberInt", .string(let text)): return Int32(text).map(AnyBSON.int32)
        case ("$numberDouble", .string(let text)):
            switch text {
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            case "NaN": return .double(.nan)
            default: return Double(text).map(AnyBSON.double)
            }
        case ("$numberDecimal", .string(let text)): return (try? Decimal128(string: text)).map(AnyBSON.decimal128)
        case ("$uuid", .string(let text)): return UUID(uuidString: text).map(AnyBSON.uuid)
        case ("$date", .object(let inner)):
            guard case .string(let ms)? = inner["$numberLong"], let millis = Int64(ms) else { return nil }
            return .datetime(Date(timeIntervalSince1970: Double(millis) / 1000))
        case ("$date", .int(let millis)): return .datetime(Date(timeIntervalSince1970: Double(millis) / 1000))
        case ("$date", .string(let iso)): return AtollCore.ExtendedJSON.parseISODate(iso).map(AnyBSON.datetime)
        case ("$binary", .object(let inner)):
            guard case .string(let base64)? = inner["base64"], let data = Data(base64Encoded: base64) else { return nil }
            if case .string("04")? = inner["subType"], data.count == 16 {
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) })
            }
            return .binary(data)
        case ("$timestamp", .object(let inner)):
            guard case .int(let t)? = inner["t"] else { return nil }
            return .timestamp(Date(timeIntervalSince1970: Double(t)))
        case ("$minKey", .int(1)): return .minKey
        case ("$maxKey", .int(1)): return .maxKey
        default: return nil
        }
    }

    /// The extended JSON of a BSON value (relaxed: plain numbers where JSON has them).
    init(_ bson: AnyBSON?) {
        guard let bson else {
            self = .null
            return
        }
        switch bson {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int32(let v): self = .int(Int64(v))
        case .int64(let v): self = .int(v)
        case .double(let v):
            self = v.isFinite ? .double(v) : .object(["$numberDouble": .string(v.isNaN ? "NaN" : v > 0 ? "Infinity" : "-Infinity")])
        case .string(let v): self = .string(v)
        case .document(let fields): self = .object(fields.mapValues(ExtendedJSON.init))
        case .array(let items): self = .array(items.map(ExtendedJSON.init))
        case .binary(let data): self = .object(["$binary": .object(["base64": .string(data.base64EncodedString()), "subType": .string("00")])])
        case .objectId(let id): self = .object(["$oid": .string(id.stringValue)])
        case .datetime(let date): self = .object(["$date": .object(["$numberLong": .string(String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))])])
        case .timestamp(let date): self = .object(["$timestamp": .object(["t": .int(Int64(date.timeIntervalSince1970)), "i": .int(1)])])
        case .regex(let regex): self = .object(["$regularExpression": .object(["pattern": .string(regex.pattern), "options": .string("")])])
        case .decimal128(let d): self = .object(["$numberDecimal": .string(d.stringValue)])
        case .uuid(let u): self = .object(["$uuid": .string(u.uuidString.lowercased())])
        case .minKey: self = .object(["$minKey": .int(1)])
        case .maxKey: self = .object(["$maxKey": .int(1)])
        }
    }
}

extension AnyBSON {
    /// The value as Foundation types, as realm-swift's `refreshCustomData` hands them out
    /// (`String`, `Int`, `Double`, `Bool`, `Date`, `ObjectId`, arrays, dictionaries, `NSNull`).
    var foundationValue: Any {
        switch self {
        case .null, .minKey, .maxKey: NSNull()
        case .bool(let v): v
        case .int32(let v): Int(v)
        case .int64(let v): Int(v)
        case .double(let v): v
        case .string(let v): v
        case .document(let fields): fields.mapValues { $0?.foundationValue ?? NSNull() } as [String: Any]
        case .array(let items): items.map { $0?.foundationValue ?? NSNull() } as [Any]
        case .binary(let v): v
        case .objectId(let v): v
        case .datetime(let v), .timestamp(let v): v
        case .regex(let v): v
        case .decimal128(let v): v
        case .uuid(let v): v
        }
    }
}
