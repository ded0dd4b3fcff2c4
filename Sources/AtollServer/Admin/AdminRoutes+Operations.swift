import AtollAdminAPI
import AtollCore
import Foundation
import Hummingbird

/// The operations that make clients reset (docs/protocol.md §3): backup and restore, client recovery
/// on or off, the maximum offline time and compaction, breaking schema changes.
extension AdminRoutes {
    func addOperations(to admin: RouterGroup<AtollRequestContext>) {
        admin.get("apps/:app/backups") { _, context in
            let app = try await requireApp(context)
            return try JSONBody.response(try await backups.list(appID: app.id).map(AdminAPI.Backup.init))
        }
        admin.post("apps/:app/backups") { request, context in
            let app = try await requireApp(context)
            let body = try await JSONBody.decode(AdminAPI.BackupRequest.self, from: request)
            let backup = try await translating { try await coordinator.backup(appID: app.id, path: body.realm, id: backups.newID(appID: app.id, now: coordinator.now())) }
            try await backups.write(backup)
            return try JSONBody.response(AdminAPI.Backup(backup), status: .created)
        }
        admin.post("apps/:app/backups/:backup/restore") { _, context in
            let app = try await requireApp(context)
            let id = try context.parameters.require("backup")
            guard let backup = try await backups.read(id), backup.appID == app.id else {
                throw ServerError(.notFound, "app \(app.id) has no backup \(id)")
            }
            let restored = try await translating { try await coordinator.restore(backup) }
            return try JSONBody.response(AdminAPI.Realms(realms: restored))
        }
        admin.get("apps/:app/settings") { _, context in
            let app = try await requireApp(context)
            return try JSONBody.response(try await settings(app.id))
        }
        admin.patch("apps/:app/settings") { request, context in
            let app = try await requireApp(context)
            let body = try await JSONBody.decode(AdminAPI.SettingsChange.self, from: request)
            if let seconds = body.maxOfflineTime, seconds < 0 || !seconds.isFinite {
                throw ServerError(.badRequest, "maxOfflineTime must be a number of seconds, 0 or more (0 keeps all history)")
            }
            if let allowed = body.clientRecovery { try await translating { try await coordinator.setClientRecovery(appID: app.id, allowed) } }
            if let seconds = body.maxOfflineTime { try await translating { try await coordinator.setMaxOfflineTime(appID: app.id, seconds) } }
            return try JSONBody.response(try await settings(app.id))
        }
        admin.post("apps/:app/compact") { _, context in
            let app = try await requireApp(context)
            let results = try await translating { try await coordinator.compact(appID: app.id) }
            return try JSONBody.response(results.map {
                AdminAPI.Compaction(realm: $0.path, compactedThrough: $0.result.compactedThrough, removedEntries: $0.result.removedEntries)
            })
        }
        admin.post("apps/:app/schema/remove-property") { request, context in
            let app = try await requireApp(context)
            let body = try await JSONBody.decode(AdminAPI.PropertyChange.self, from: request)
            let realms = try await translating {
                try await coordinator.applyBreakingChange(.removeProperty(type: body.type, name: body.property), appID: app.id)
            }
            return try JSONBody.response(AdminAPI.Realms(realms: realms))
        }
        admin.post("apps/:app/schema/change-property-type") { request, context in
            let app = try await requireApp(context)
            let body = try await JSONBody.decode(AdminAPI.PropertyChange.self, from: request)
            guard let name = body.newType else { throw ServerError(.badRequest, "newType is missing (bool, int, double, string …)") }
            guard let newType = PropertyType(storedName: name), newType != .object else {
                throw ServerError(.badRequest, "newType \"\(name)\" is not a scalar type: use one of "
                    + PropertyType.allCases.filter { $0 != .object && $0 != .linkingObjects }.map(\.rawValue).joined(separator: ", "))
            }
            let realms = try await translating {
                try await coordinator.applyBreakingChange(
                    .changePropertyType(type: body.type, name: body.property, to: newType, isOptional: body.optional), appID: app.id)
            }
            return try JSONBody.response(AdminAPI.Realms(realms: realms))
        }
    }

    /// Runs an operation, turning the store's and the schema's errors into the API's.
    private func translating<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as ServerStoreError {
            throw ServerError(error.code == .notFound || error.code == .missingOwner ? .notFound : .badRequest, error.message)
        } catch let error as SchemaError {
            throw ServerError(error.code == .unknownType || error.code == .unknownProperty ? .notFound : .badRequest, error.message)
        }
    }

    private func settings(_ appID: String) async throws -> AdminAPI.Settings {
        let stored = try await store.app(id: appID)
        return AdminAPI.Settings(
            clientRecovery: try await coordinator.clientRecoveryAllowed(appID: appID),
            maxOfflineTime: try await coordinator.maxOfflineTime(appID: appID),
            overrides: .init(clientRecovery: stored?.clientRecovery, maxOfflineTime: stored?.maxOfflineTime))
    }
}
