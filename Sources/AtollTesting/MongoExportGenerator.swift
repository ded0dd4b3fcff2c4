import Foundation

/// Writes mongoexport-shaped files (MongoDB Extended JSON v2, relaxed or canonical) for the data
/// import's tests and benchmark: Task documents with every construct the import types.
///
/// ```swift
/// let line = MongoExportGenerator.task(7, format: .canonical, partition: "notes")
/// ```
package enum MongoExportGenerator {
    package enum Format: Sendable { case relaxed, canonical }

    /// The ObjectId (24 hex digits) of document `n` of a kind (`1`: tasks, `2`: people).
    package static func objectId(_ n: Int, kind: Int = 1) -> String { String(format: "%08x%016x", kind, n) }

    /// The UUID of task `n`.
    package static func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-%012X", n))! }

    /// Task `n`: `_id`, `title`, `priority` (int32), `big` (int64), `estimate` (double), `price`
    /// (Decimal128), `due` (date), `tag` (UUID, binary subtype 04), `tags` (array), `address`
    /// (embedded document) and `owner` (a person's `_id`), plus `_partition` when given.
    package static func task(_ n: Int, format: Format, partition: String? = nil, owner: Int? = nil) -> String {
        let uuidBytes = withUnsafeBytes(of: uuid(n).uuid) { Data($0) }.base64EncodedString()
        let dueMillis = Int64(1_700_000_000_000) + Int64(n) * 1_000
        var members: [String] = [#""_id":{"$oid":"\#(objectId(n))"}"#]
        if let partition { members.append(#""_partition":"\#(partition)""#) }
        members.append(#""title":"Task \#(n) \"quoted\" é""#)
        switch format {
        case .relaxed:
            members.append(#""priority":\#(n % 5)"#)
            members.append(#""big":{"$numberLong":"\#(9_007_199_254_740_993 + Int64(n))"}"#)
            members.append(#""estimate":\#(Double(n) + 0.5)"#)
            let due = ISO8601DateFormatter.string(from: Date(timeIntervalSince1970: Double(dueMillis) / 1000), timeZone: TimeZone(identifier: "UTC")!,
                                                  formatOptions: [.withInternetDateTime])
            members.append(#""due":{"$date":"\#(due)"}"#)
        case .canonical:
            members.append(#""priority":{"$numberInt":"\#(n % 5)"}"#)
            members.append(#""big":{"$numberLong":"\#(9_007_199_254_740_993 + Int64(n))"}"#)
            members.append(#""estimate":{"$numberDouble":"\#(Double(n) + 0.5)"}"#)
            members.append(#""due":{"$date":{"$numberLong":"\#(dueMillis)"}}"#)
        }
        members.append(#""price":{"$numberDecimal":"\#(n).25"}"#)
        members.append(#""tag":{"$binary":{"base64":"\#(uuidBytes)","subType":"04"}}"#)
        members.append(#""tags":["t\#(n % 3)","all"]"#)
        members.append(#""address":{"street":"\#(n) Main St","city":"Atoll"}"#)
        if let owner { members.append(#""owner":{"$oid":"\#(objectId(owner, kind: 2))"}"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Person `n` (`_id`, `name`).
    package static func person(_ n: Int) -> String { #"{"_id":{"$oid":"\#(objectId(n, kind: 2))"},"name":"Person \#(n)"}"# }

    /// `lines` as mongoexport writes them: one a line, or with `--jsonArray` one JSON array.
    package static func file(_ lines: [String], jsonArray: Bool = false) -> Data {
        Data((jsonArray ? "[" + lines.joined(separator: ",\n") + "]" : lines.joined(separator: "\n") + "\n").utf8)
    }
}
