import ArgumentParser
import AtollRealmFile
import Foundation

/// `atoll realm-file`: look into a file written by Realm (realm-core), without a server.
struct RealmFileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-file",
        abstract: "Look into a .realm file written by Realm: its classes, properties and objects.",
        subcommands: [Inspect.self, Export.self])

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Format and schema versions, classes with their properties and object counts, Realm's own tables.")
        @Argument(help: "The .realm file.") var file: String
        func run() throws { print(try output()) }
        func output() throws -> String { try RealmFileReport.inspect(RealmFile(path: file)) }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Objects as relaxed Extended JSON, one a line.",
            discussion: """
                With --class, each line is one object of that class. Without, every class's objects follow \
                each other, each line {"class": <name>, "object": <object>}. Links become the target's primary \
                key, embedded objects are inlined, other links are {"$link": {"class": …, "key": …}}.
                """)
        @Argument(help: "The .realm file.") var file: String
        @Option(name: .customLong("class"), help: "Only the objects of this class.") var className: String?

        func run() throws { try export { print($0) } }

        func export(_ emit: (String) -> Void) throws {
            try RealmFileReport.export(RealmFile(path: file), className: className, emit)
        }
    }
}
