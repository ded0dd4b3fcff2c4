import ArgumentParser
import AtollAdminClient

struct APIKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "Create, list or delete an app's server API keys (Credentials.serverAPIKey).",
        subcommands: [Create.self, List.self, Delete.self])

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The key's name.") var name: String
        func run() async throws {
            let key = try await options.client().createServerAPIKey(app: app, name: name)
            print("\(key.id)\t\(key.name)\t\(key.key ?? "")")
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws {
            for key in try await options.client().serverAPIKeys(app: app) {
                print("\(key.id)\t\(key.name)\tuser \(key.userID ?? "-")\t\(key.disabled ? "disabled" : "enabled")")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The key id.") var id: String
        func run() async throws { try await options.client().deleteServerAPIKey(app: app, id: id) }
    }
}
