import AtollAdminAPI
import AtollAppConfig
import AtollCore
import Foundation
import Hummingbird

/// `atoll apps import` against a running server: `PUT /api/admin/v1/apps/:app/configuration`
/// with an app's configuration (the JSON of one entry of the configuration file's `apps`) adds
/// the app, or with `?replace=true` replaces a runtime app's configuration (its sessions end
/// and reconnect under the new rules). The same configuration again answers `unchanged`. The
/// answer never holds the configuration: it carries the operator's secrets.
///
/// `GET` of the same path answers the app's configuration as the server serves it, with every
/// secret replaced by `"<secret>"` (``AppConfig/App/redacted``), where it comes from and its
/// generation: `atoll apps show`. A redacted configuration sent back as it is, is refused.
extension AdminRoutes {
    func addAppConfiguration(to admin: RouterGroup<AtollRequestContext>) {
        admin.get("apps/:app/configuration") { _, context in
            let id = try context.parameters.require("app")
            guard let entry = auth.apps.entry(id: id) else {
                throw ServerError(.appNotFound, "app \(id) has no configuration on this server")
            }
            return try JSONBody.response(AdminAPI.AppConfiguration(
                app: id, origin: entry.origin.rawValue, generation: entry.generation, configuration: entry.app.redacted))
        }
        admin.put("apps/:app/configuration") { request, context in
            guard let runtimeApps else { throw ServerError(.notFound, "this server does not take app configurations") }
            let id = try context.parameters.require("app")
            guard AppConfig.App.isValidID(id) else {
                throw ServerError(.invalidAppConfiguration, "the app id must be letters, digits, '-', '_' or '.' (at most 128 bytes)")
            }
            guard !(store is PostgresServerStore) else {
                throw ServerError(.badRequest, "a PostgreSQL store is shared by several nodes, and an app added here would reach only this one: declare the app in every node's configuration file")
            }
            let replace: Bool
            switch request.uri.queryParameters["replace"].map(String.init) {
            case nil, "false", "0": replace = false
            case "true", "1": replace = true
            default: throw ServerError(.badRequest, "replace must be true or false")
            }
            let app = try await Self.decodeAppConfiguration(request)
            guard app.id == id else {
                throw ServerError(.invalidAppConfiguration, "app.id: the body configures \"\(app.id)\", the path names another app")
            }
            let (outcome, _) = try await runtimeApps.put(app, replace: replace)
            return try JSONBody.response(AdminAPI.AppConfigurationAnswer(app: id, status: outcome.rawValue), status: outcome == .created ? .created : .ok)
        }
    }

    /// The body as an app configuration: bounded in size and depth, with the field at fault named.
    static func decodeAppConfiguration(_ request: Request) async throws -> ServerConfiguration.App {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: RuntimeApps.maxBodyBytes)
        } catch {
            throw ServerError(.invalidAppConfiguration, "the configuration is larger than \(RuntimeApps.maxBodyBytes) bytes")
        }
        let data = Data(buffer.readableBytesView)
        guard JSONNesting.isWithin(data) else {
            throw ServerError(.invalidAppConfiguration, "the configuration nests deeper than \(JSONNesting.maxDepth) levels")
        }
        do {
            return try JSONDecoder().decode(ServerConfiguration.App.self, from: data)
        } catch let error as DecodingError {
            throw ServerError(.invalidAppConfiguration, "app\(ServerConfiguration.describe(error))")
        } catch {
            throw ServerError(.invalidAppConfiguration, "the configuration is not JSON")
        }
    }
}
