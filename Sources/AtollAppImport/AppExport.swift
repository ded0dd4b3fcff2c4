import Foundation

/// The files of an App Services app export (`appservices pull`, `realm-cli pull`), by path
/// relative to the export folder (`sync/config.json`). The importer reads only this value.
///
/// ```swift
/// let export = try AppExport(folder: URL(fileURLWithPath: "./my-app"))
/// let plan = AppImporter.plan(export)
/// ```
package struct AppExport: Sendable, Hashable {
    package var files: [String: Data]

    package init(files: [String: Data]) {
        self.files = files
    }

    /// Reads every regular file under `folder` (at most `maxFiles` files of `maxBytes` each:
    /// an export is configuration, not data).
    package init(folder: URL, maxFiles: Int = 10_000, maxBytes: Int = 16 << 20) throws {
        let root = folder.standardizedFileURL.resolvingSymlinksInPath()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw AppImportError(.notAFolder, "\(folder.path) is not a folder (give the folder `appservices pull` wrote)")
        }
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey]) else {
            throw AppImportError(.unreadable, "cannot list \(folder.path)")
        }
        var files: [String: Data] = [:]
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let url as URL in walker {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values?.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.resolvingSymlinksInPath().path
            guard path.hasPrefix(prefix) else { continue }
            let relative = String(path.dropFirst(prefix.count))
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            guard files.count < maxFiles else { throw AppImportError(.tooLarge, "more than \(maxFiles) files under \(folder.path)") }
            guard (values?.fileSize ?? 0) <= maxBytes else {
                throw AppImportError(.tooLarge, "\(relative) is larger than \(maxBytes) bytes")
            }
            do { files[relative] = try Data(contentsOf: url) } catch {
                throw AppImportError(.unreadable, "cannot read \(relative): \(error.localizedDescription)")
            }
        }
        self.files = files
    }
}

/// Why an export could not be imported at all (a refused rule is a report line, not an error).
package struct AppImportError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: Int, Sendable, Hashable {
        case notAFolder = 1, unreadable, tooLarge, noAppID, invalidJSON
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
