import ArgumentParser
import AtollAppImport
import Foundation

/// `atoll apps import <export-folder>`: an App Services app export → an Atoll app (docs/from-atlas.md).
struct ImportApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an App Services app export (the folder `appservices pull` wrote) as an Atoll app.",
        discussion: """
            Prints what was carried over, what was refused and why, and what needs your attention. \
            --dry-run prints the report and the app's configuration only; --config-out writes the app \
            into a server configuration file (replacing an app of the same id: running it twice is harmless).
            """)

    @Argument(help: "The export folder.") var folder: String
    @Flag(help: "Print the report and the resulting configuration; change nothing.") var dryRun = false
    @Option(help: "The server configuration file to write the app into (made when missing).") var configOut: String?

    func run() async throws {
        let plan: ImportPlan
        do {
            plan = try AppImporter.plan(AppExport(folder: URL(fileURLWithPath: folder)))
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
            print("\napp configuration (an entry of \"apps\" in the server's configuration file):")
            print(String(decoding: json, as: UTF8.self))
            return
        }
        guard let configOut else {
            throw ValidationError("""
                the server reads app configurations from its configuration file: give --config-out <file> \
                (then start atoll-server --config <file>), or --dry-run to see the result
                """)
        }
        try plan.write(into: URL(fileURLWithPath: configOut))
        print("\nwrote app \(plan.app.id) into \(configOut)")
    }
}
