import Foundation

/// A partition value of partition-based sync: what `user.configuration(partitionValue:)` takes.
public enum PartitionValue: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case objectId(ObjectId)
    case uuid(UUID)
    case null

    /// The realm path: a type tag, a colon, then the value as text (`s:tasks`, `i:42`,
    /// `o:5f1d7e…` (24 hex digits), `u:E621E1F8-…` (upper-case UUID), `n:`). Two partition values
    /// of different types never share a path.
    public var path: String {
        switch self {
        case .string(let s): "s:" + s
        case .int(let i): "i:\(i)"
        case .objectId(let o): "o:" + o.stringValue
        case .uuid(let u): "u:" + u.uuidString
        case .null: "n:"
        }
    }

    /// Parses ``path``; `nil` when the tag is unknown or the value is not in the canonical form
    /// ``path`` writes (so every realm has exactly one path).
    public init?(path: String) {
        guard path.count >= 2, path.dropFirst().first == ":" else { return nil }
        let body = String(path.dropFirst(2))
        switch path.first {
        case "s": self = .string(body)
        case "i":
            guard let i = Int64(body), String(i) == body else { return nil }
            self = .int(i)
        case "o":
            guard let o = ObjectId(body), o.stringValue == body else { return nil }
            self = .objectId(o)
        case "u":
            guard let u = UUID(uuidString: body), u.uuidString == body else { return nil }
            self = .uuid(u)
        case "n":
            guard body.isEmpty else { return nil }
            self = .null
        default: return nil
        }
    }
}

/// What a session syncs: one partition's realm, or the app's flexible-sync realm (whose content the
/// query set chooses, see ``QueryChange``).
public enum SyncTarget: Hashable, Sendable {
    case partition(PartitionValue)
    case flexible
}
