import AtollAppConfig
import AtollCore
import Foundation

/// What `atoll apps import` makes of an App Services export: the Atoll app configuration (the
/// JSON of one entry of the server configuration's `apps`), the schema the export declares, and a
/// report of everything mapped, refused or not understood.
package struct ImportPlan: Sendable, Hashable {
    /// The Atoll app, with the App Services app id (apps keep their `App(id:)`).
    package var app: ImportedApp
    /// The object types the export's schemas declare, as Atoll reads them.
    package var schema: [ObjectSchema]
    package var report: ImportReport

    /// The app configuration as the server's configuration file holds it.
    package func appJSON() throws -> Data {
        try app.json()
    }

    /// Puts the app into the server configuration file at `url` (made when missing), replacing
    /// an app with the same id and keeping everything else: writing twice gives the same file.
    package func write(into url: URL) throws {
        var configuration: [String: Any] = [:]
        if FileManager.default.fileExists(atPath: url.path) {
            guard let existing = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
                throw AppImportError(.invalidJSON, "\(url.path) is not a JSON object (a server configuration file)")
            }
            configuration = existing
        }
        let entry = try JSONSerialization.jsonObject(with: appJSON())
        var apps = configuration["apps"] as? [Any] ?? []
        if let index = apps.firstIndex(where: { ($0 as? [String: Any])?["id"] as? String == app.id }) {
            apps[index] = entry
        } else {
            apps.append(entry)
        }
        configuration["apps"] = apps
        let data = try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try data.write(to: url, options: .atomic)
    }
}

/// One line of the import report.
package struct ImportItem: Sendable, Hashable, CustomStringConvertible {
    package enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// Carried over exactly.
        case mapped
        /// Carried over, but the operator must supply something (a key, a webhook URL).
        case needsAttention = "needs attention"
        /// Not carried over: Atoll cannot express it exactly, so it grants nothing.
        case refused
        /// Not carried over: outside what `apps import` reads (functions, values, hosting …).
        case notCarried = "not carried over"
        /// A file or setting the importer does not know.
        case unknown
    }

    package var outcome: Outcome
    /// What the line is about: a file, a role (`Task role "owner"`), a provider.
    package var subject: String
    package var detail: String

    package init(_ outcome: Outcome, _ subject: String, _ detail: String) {
        self.outcome = outcome
        self.subject = subject
        self.detail = detail
    }

    package var description: String { "\(outcome.rawValue): \(subject): \(detail)" }
}

/// The report of an import, in the order things were read.
package struct ImportReport: Sendable, Hashable, CustomStringConvertible {
    package var items: [ImportItem] = []

    package init(items: [ImportItem] = []) { self.items = items }

    mutating func add(_ outcome: ImportItem.Outcome, _ subject: String, _ detail: String) {
        items.append(ImportItem(outcome, subject, detail))
    }

    package func items(_ outcome: ImportItem.Outcome) -> [ImportItem] { items.filter { $0.outcome == outcome } }

    /// Whether anything was refused (some access the source granted is not granted in Atoll).
    package var hasRefusals: Bool { items.contains { $0.outcome == .refused } }

    package var description: String {
        var out: [String] = []
        for outcome in ImportItem.Outcome.allCases {
            let lines = items(outcome)
            guard !lines.isEmpty else { continue }
            out.append("\(outcome.rawValue) (\(lines.count)):")
            out += lines.map { "  \($0.subject): \($0.detail)" }
        }
        return out.joined(separator: "\n")
    }
}

/// The app an import makes: the server's own app configuration (`ServerConfiguration.App`), so
/// `--dry-run`, `--config-out` and the admin API carry the same JSON.
package typealias ImportedApp = AppConfig.App

extension AppConfig.App {
    /// The import's name for a permission rule (one role of one type).
    typealias Rule = AppConfig.PermissionRule
}
