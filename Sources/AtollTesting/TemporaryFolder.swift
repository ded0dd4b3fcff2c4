import Atoll
import Foundation

/// A fresh folder under the system's temporary directory, removed by `remove()`.
///
/// ```swift
/// let folder = try TemporaryFolder()
/// defer { folder.remove() }
/// var config = Realm.Configuration(fileURL: folder.url.appendingPathComponent("test.realm"))
/// ```
package struct TemporaryFolder: Sendable {
    package let url: URL

    package init(_ label: String = "atoll") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A realm configuration whose file lives in this folder.
    package func configuration(_ name: String = "test.realm", objectTypes: [ObjectBase.Type]? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: url.appendingPathComponent(name), objectTypes: objectTypes)
    }

    /// A folder made elsewhere that this value removes (a server's data directory, say).
    package init(existing url: URL) throws {
        self.url = url
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
