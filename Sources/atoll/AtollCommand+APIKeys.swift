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
        func run() async throws { print(try await output()) }
        /// `id<TAB>name<TAB>key`: the key's secret is shown this once.
        func output() async throws -> String {
            let key = try await options.client().createServerAPIKey(app: app, name: name)
            return "\(key.id)\t\(key.name)\t\(key.key ?? "")"
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws { for line in try await output() { print(line) } }
        /// One line per key, without its secret.
        func output() async throws -> [String] {
            try await options.client().serverAPIKeys(app: app).map { key in
                "\(key.id)\t\(key.name)\tuser \(key.userID ?? "-")\t\(key.disabled ? "disabled" : "enabled")"
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
