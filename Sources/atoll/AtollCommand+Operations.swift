import ArgumentParser
import AtollAdminClient
import Foundation

/// The operations that make clients reset (docs/client-reset.md, "Testing it").
struct Backups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up a realm or a whole app, list backups, restore one (every client of a restored realm resets).",
        subcommands: [Create.self, List.self, Restore.self])

    struct Create: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "One realm's path (s:<partition>, flx); every realm of the app when left out.") var realm: String?
        func run() async throws {
            let backup = try await options.client().backup(app: app, realm: realm)
            print(backup.id)
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws {
            for backup in try await options.client().backups(app: app) {
                print("\(backup.id)\t\(backup.realm ?? "whole app")\t\(backup.realms.count) realm(s)")
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The backup id (from `atoll backup create` or `atoll backup list`).") var backup: String
        func run() async throws {
            for realm in try await options.client().restore(app: app, backup: backup) { print("restored \(realm)") }
        }
    }
}

struct Recovery: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn client recovery on or off for an app (kept across restarts; overrides the configuration).",
        subcommands: [Enable.self, Disable.self])

    struct Enable: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws { try await options.client().setClientRecovery(app: app, true) }
    }

    struct Disable: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws { try await options.client().setClientRecovery(app: app, false) }
    }
}

struct Retention: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set an app's maximum offline time; compact its history now.",
        subcommands: [Show.self, Set.self, Compact.self])

    struct Show: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws {
            let settings = try await options.client().settings(app: app)
            print("client recovery \(settings.clientRecovery ? "on" : "off")")
            print("max offline time \(settings.maxOfflineTime.map { "\($0) s" } ?? "none (all history kept)")")
        }
    }

    struct Set: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "Seconds a client may stay offline before it must reset; 0 keeps all history.") var maxOfflineTime: Double
        func run() async throws { try await options.client().setMaxOfflineTime(app: app, seconds: maxOfflineTime) }
    }

    struct Compact: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        func run() async throws {
            for result in try await options.client().compact(app: app) {
                print("\(result.realm)\tcompacted through \(result.compactedThrough)\t\(result.removedEntries) entries folded")
            }
        }
    }
}

struct Schema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Breaking schema changes: every client of the changed realms gets a client reset (manual handler).",
        subcommands: [RemoveProperty.self, ChangeType.self])

    struct RemoveProperty: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The object type.") var type: String
        @Option(help: "The property to remove.") var property: String
        func run() async throws {
            for realm in try await options.client().removeProperty(app: app, type: type, property: property) { print("rewrote \(realm)") }
        }
    }

    struct ChangeType: AsyncParsableCommand {
        @OptionGroup var options: ServerOptions
        @Option(help: "The object type.") var type: String
        @Option(help: "The app id.") var app: String
        @Option(help: "The property to retype.") var property: String
        @Option(help: "The new type: bool, int, double, float, string, data, date, objectId, uuid, decimal128.") var to: String
        func run() async throws {
            for realm in try await options.client().changePropertyType(app: app, type: type, property: property, to: to) {
                print("rewrote \(realm)")
            }
        }
    }
}
