/// An error raised while opening or reading a Realm file.
///
/// Every malformed, truncated or unsupported input surfaces as one of these cases; the reader never traps
/// on file content.
public enum RealmFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened, measured or mapped.
    case fileAccess(path: String, reason: String)
    /// The bytes are not a consistent Realm file (bad header, a ref outside the file, a malformed node...).
    case invalidDatabase(reason: String)
    /// The file format version is one this reader does not read.
    case unsupportedFormat(version: Int, hint: String)
    /// The file is valid but uses a feature this reader does not decode yet.
    case unsupported(String)
    /// A table, column or object asked for by name or key does not exist.
    case notFound(String)

    public var description: String {
        switch self {
        case let .fileAccess(path, reason): "cannot access Realm file at \(path): \(reason)"
        case let .invalidDatabase(reason): "invalid Realm file: \(reason)"
        case let .unsupportedFormat(version, hint): "unsupported Realm file format \(version): \(hint)"
        case let .unsupported(what): "unsupported Realm content: \(what)"
        case let .notFound(what): "not found: \(what)"
        }
    }
}
