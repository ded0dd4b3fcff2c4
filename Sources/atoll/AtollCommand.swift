import ArgumentParser
import AtollAdminClient
import Foundation

/// `atoll`: operate an atoll-server through its admin API.
@main
struct AtollCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "atoll",
        abstract: """
            Operate an Atoll sync server: apps, users, sessions, sync, backups, recovery, retention, schema, API keys; \
            look into a Realm file.
            """,
        subcommands: [Apps.self, Users.self, Sessions.self, Sync.self, Backups.self, Recovery.self, Retention.self, Schema.self,
                      APIKeys.self, DataCommand.self, RealmFileCommand.self])
}

/// Where the server is and how to prove being its operator.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's base URL (or ATOLL_SERVER).")
    var server = ProcessInfo.processInfo.environment["ATOLL_SERVER"] ?? "http://127.0.0.1:9090"

    @Option(help: "The admin key (or ATOLL_ADMIN_KEY); by default read from <data>/admin-key.")
    var adminKey = ProcessInfo.processInfo.environment["ATOLL_ADMIN_KEY"]

    @Option(help: "The server's data folder, where it keeps admin-key.")
    var data = "./atoll-data"

    func client() throws -> AdminClient {
        guard let url = URL(string: server) else { throw ValidationError("--server: '\(server)' is not a URL") }
        return AdminClient(server: url, key: try adminKey ?? AdminClient.key(dataDirectory: data))
    }
}

struct Apps: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, create, show or import apps.", subcommands: [List.self, Create.self, Show.self, ImportApp.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        func run() async throws {
            for app in try await options.client().apps() { print("\(app.id)\tsync \(app.syncEnabled ? "enabled" : "terminated")") }
        }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Argument(help: "The app id.") var id: String
        func run() async throws {
            let app = try await options.client().createApp(id)
            print("created \(app.id)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an app's configuration as the server serves it, secrets as \"<secret>\".")
        @OptionGroup var options: ServerOptions
        @Argument(help: "The app id.") var id: String
        func run() async throws {
            let view = try await options.client().appConfiguration(app: id)
            print("# app \(view.app): from the \(view.origin == "runtime" ? "admin API (runtime)" : "configuration file"), generation \(view.generation)")
            print(String(decoding: view.configuration, as: UTF8.self))
        }
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, disable, enable or delete an app's users.", subcommands: [List.self, Disable.self, Enable.self, Delete.self])

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws {
            for user in try await options.client().users(app: app) {
                print("\(user.id)\t\(user.providers.joined(separator: ","))\t\(user.email ?? "-")\t\(user.disabled ? "disabled" : "enabled")")
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The user id.") var user: String
        func run() async throws { try await options.client().setUserDisabled(app: app, user: user, true) }
    }

    struct Enable: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The user id.") var user: String
        func run() async throws { try await options.client().setUserDisabled(app: app, user: user, false) }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The user id.") var user: String
        func run() async throws { try await options.client().deleteUser(app: app, user: user) }
    }
}

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List an app's connected sync sessions.")
    @OptionGroup var options: ServerOptions
    @Option(help: "The app id.") var app: String
    func run() async throws {
        for s in try await options.client().sessions(app: app) {
            print("\(s.user)\t\(s.realm)\tfile \(s.fileIdent)\tconnection \(s.connection) session \(s.session)")
        }
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Terminate sync (forgets every client's state: clients reset when they come back) or enable it again.",
        subcommands: [Terminate.self, Enable.self])

    struct Terminate: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws { try await options.client().terminateSync(app: app) }
    }

    struct Enable: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws { try await options.client().enableSync(app: app) }
    }
}
