import ArgumentParser
import AtollAdminClient
import AtollAppImport
import Foundation

/// `atoll apps import <export-folder>`: an App Services app export → an Atoll app (docs/from-atlas.md).
struct ImportApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an App Services app export (the folder `appservices pull` wrote) as an Atoll app.",
        discussion: """
            Prints what was carried over, what was refused and why, and what needs your attention, then \
            creates the app on the running server (--server, --admin-key) through its admin API: running \
            it twice is harmless (the server answers "unchanged"); a changed configuration of an app the \
            server has needs --replace (its devices reconnect under the new rules). --dry-run prints the \
            report and the app's configuration only; --config-out writes the app into a server \
            configuration file instead (replacing an app of the same id).
            """)

    @Argument(help: "The export folder.") var folder: String
    @Flag(help: "Print the report and the resulting configuration; change nothing.") var dryRun = false
    @Option(help: "The server configuration file to write the app into (made when missing) instead of creating it on the server.") var configOut: String?
    @Option(help: "A JSON file of settings merged into the imported app: what the export does not hold, such as {\"customJWT\": {\"algorithm\": \"HS256\", \"key\": …}} (keys stay out of the command line).") var settings: String?
    @Flag(help: "Replace the configuration of an app the server already has (its sync sessions end and reconnect under the new rules).") var replace = false
    @OptionGroup var options: ServerOptions

    func run() async throws {
        var plan: ImportPlan
        do {
            plan = try AppImporter.plan(AppExport(folder: URL(fileURLWithPath: folder)))
            if let settings { try plan.merge(settings: Data(contentsOf: URL(fileURLWithPath: settings))) }
        } catch let error as AppImportError {
            throw ValidationError(error.message)
        }
        print(plan.report)
        if plan.report.hasRefusals {
            print("\nRefused items grant nothing in Atoll: users they applied to have less access than in App Services.")
        }
        if !plan.schema.isEmpty {
            print("\nschema (taken from the app's models when they sync; listed to compare):")
            for type in plan.schema {
                let kind = type.isEmbedded ? "embedded " : type.isAsymmetric ? "asymmetric " : ""
                let properties = type.properties.map { p in
                    let collection = p.collection == .single ? "" : "\(p.collection.rawValue) of "
                    return "\(p.name): \(collection)\(p.objectType ?? p.type.rawValue)\(p.isOptional ? "?" : "")\(p.isPrimaryKey ? " (primary key)" : "")"
                }
                print("  \(kind)\(type.name) { \(properties.joined(separator: ", ")) }")
            }
        }
        let json = try plan.appJSON()
        if dryRun {
            print("\napp configuration (an entry of \"apps\" in the server's configuration file; secrets shown as \(ImportedApp.secretPlaceholder)):")
            print(String(decoding: try plan.app.redacted.json(), as: UTF8.self))
            return
        }
        if let configOut {
            try plan.write(into: URL(fileURLWithPath: configOut))
            print("\nwrote app \(plan.app.id) into \(configOut)")
            return
        }
        let answer = try await options.client().putAppConfiguration(app: plan.app.id, json, replace: replace)
        print("\nserver \(options.server): app \(answer.app) \(answer.status)")
    }
}
