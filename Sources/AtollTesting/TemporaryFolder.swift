import Atoll
import Foundation

/// A fresh folder under the system's temporary directory, removed by `remove()`.
///
/// ```swift
/// let folder = try TemporaryFolder()
/// defer { folder.remove() }
/// var config = Realm.Configuration(fileURL: folder.url.appendingPathComponent("test.realm"))
/// ```
public struct TemporaryFolder: Sendable {
    public let url: URL

    public init(_ label: String = "atoll") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A realm configuration whose file lives in this folder.
    public func configuration(_ name: String = "test.realm", objectTypes: [ObjectBase.Type]? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: url.appendingPathComponent(name), objectTypes: objectTypes)
    }

    /// A folder made elsewhere that this value removes (a server's data directory, say).
    public init(existing url: URL) throws {
        self.url = url
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
