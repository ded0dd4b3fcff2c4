import ArgumentParser
import AtollAdminClient
import AtollCore
import Foundation

/// `atoll data import` / `atoll data export`: mongoexport's Extended JSON into an app's synced
/// data, and back out (docs/from-atlas.md, "Data").
struct DataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data",
        abstract: "Import mongoexport Extended JSON into an app's synced data, or export it as canonical Extended JSON.",
        subcommands: [Import.self, Export.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a mongoexport file (Extended JSON v2, a document a line or a JSON array) or a mongodump .bson file as objects of one type.",
            discussion: """
                Documents are typed through the realm's schema (or --schema, e.g. the schema.json `atoll data export` \
                wrote) and written as server changes: devices download them like any change. The run keeps a \
                checkpoint next to the file (<file>.atoll-import.json) after every batch; after an interruption \
                --resume continues from it. Documents whose _id is already there are overwritten, never duplicated.
                """)
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The object type (class name) the documents become.") var type: String
        @Option(help: "Partition-based apps: the member whose value chooses each document's realm (e.g. _partition).") var partitionKey: String?
        @Option(help: "One realm for every document (s:<partition>, flx); default flx.") var realm: String?
        @Option(help: "A JSON file with Atoll object schemas to add first (schema.json of an export).") var schema: String?
        @Option(help: "Documents per batch (at most 2000).") var batchSize = 500
        @Option(help: "Stop after this many documents (resumable with --resume).") var limit: Int64?
        @Flag(help: "Continue an interrupted import from its checkpoint.") var resume = false
        @Flag(help: "The file is mongodump BSON (the default for a name ending in .bson).") var bson = false
        @Argument(help: "The mongoexport file.") var file: String

        func run() async throws {
            guard (1...2_000).contains(batchSize) else { throw ValidationError("--batch-size is 1 to 2000") }
            var run = DataImportRun(client: try options.client(), app: app, type: type, file: URL(fileURLWithPath: file))
            run.partitionKey = partitionKey
            run.realm = realm
            run.schema = try schema.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            run.batchSize = batchSize
            run.limit = limit
            run.resume = resume
            if bson || file.hasSuffix(".bson") {
                run.bsonToExtendedJSON = { bytes in try BSON.read(bytes).text }
            }
            let report = try await run.run { report in
                FileHandle.standardError.write(Data("\rread \(report.read)  imported \(report.imported)  refused \(report.refusedCount)".utf8))
            }
            FileHandle.standardError.write(Data("\n".utf8))
            print(report)
            if !report.finished { print("stopped after \(report.read) documents: `--resume` continues (checkpoint \(run.checkpointFile.path))") }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export an app's objects as canonical Extended JSON: <out>/<realm>/<Type>.json and schema.json per realm.")
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "Only this type.") var type: String?
        @Option(help: "Only this realm (s:<partition>, flx).") var realm: String?
        @Option(help: "The folder to write into.") var out: String
        @Flag(help: "Write mongodump BSON (<Type>.bson) instead of canonical Extended JSON.") var bson = false

        func run() async throws {
            let client = try options.client()
            var export = DataExport(client: client, app: app, type: type, realm: realm, folder: URL(fileURLWithPath: out))
            if bson { export.bsonFromExtendedJSON = { text in try BSON.write(JSONNode.parse(Array(text.utf8))) } }
            let written = try await export.run()
            for (file, count) in written { print("\(file.path)\t\(count) document(s)") }
        }
    }
}
