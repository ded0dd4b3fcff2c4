import AtollAdminAPI
import AtollCore
import Foundation
import Hummingbird

/// `atoll data import` / `atoll data export` (docs/from-atlas.md, "Data"): batches of mongoexport
/// documents written into an app's history, pages of canonical Extended JSON read out of it.
extension AdminRoutes {
    /// A batch's request body: at most this many bytes (documents of up to 4 MB each, several a batch).
    static let maxImportRequestBytes = 16 << 20

    func addData(to admin: RouterGroup<AtollRequestContext>) {
        admin.post("apps/:app/data/import") { request, context in
            let app = try await requireApp(context, creating: true)
            let outcome: DataImportOutcome
            do {
                if request.headers[.contentType]?.hasPrefix(DataImportBody.contentType) == true {
                    // The compact body: documents parsed here, off the coordinator, from the bytes as sent.
                    let (header, bytes, batch) = try await Self.compactImport(request)
                    let placed = SyncCoordinator.place(batch.documents.map { bytes[$0] }, header)
                    outcome = try await coordinator.importDocuments(appID: app.id, placed: placed, header)
                } else {
                    let body = try await JSONBody.decode(ImportRequest.self, from: request, maxBytes: Self.maxImportRequestBytes)
                    guard body.documents.count <= SyncCoordinator.maxImportBatch else {
                        throw ServerError(.badRequest, "a batch holds at most \(SyncCoordinator.maxImportBatch) documents")
                    }
                    outcome = try await coordinator.importDocuments(appID: app.id, DataImportRequest(
                        type: body.type, documents: body.documents, partitionKey: body.partitionKey, realm: body.realm, schema: body.schema ?? []))
                }
            } catch let error as DataImportError {
                throw ServerError(.badRequest, error.description)
            } catch let error as MergeError {
                throw ServerError(.badRequest, "the realm refused the batch: \(error)")
            }
            return try JSONBody.response(AdminAPI.ImportBatchResult(
                imported: outcome.imported,
                refused: outcome.refused.map { .init(index: $0.index, code: $0.error.code.rawValue, path: $0.error.path, message: $0.error.message) },
                unresolvedLinks: outcome.unresolvedLinks.map {
                    .init(index: $0.index, type: $0.target.objectType, id: ExtendedJSON.canonical($0.target.primaryKey, schema: [:]))
                },
                ignoredFields: outcome.ignoredFields, realms: outcome.realms.sorted()))
        }
        admin.get("apps/:app/data/realms") { _, context in
            let app = try await requireApp(context)
            return try JSONBody.response(AdminAPI.Realms(realms: try await coordinator.dataRealms(appID: app.id)))
        }
        admin.get("apps/:app/data/export") { request, context in
            let app = try await requireApp(context)
            let query = request.uri.queryParameters
            guard let realm = query["realm"].map(String.init) else {
                throw ServerError(.badRequest, "export needs ?realm=<path>[&type=<Type>]")
            }
            let type = query["type"].map(String.init)
            let after = query["after"].flatMap { Int(String($0)) } ?? 0
            let limit = min(query["limit"].flatMap { Int(String($0)) } ?? 1_000, 5_000)
            do {
                let page = try await coordinator.exportDocuments(appID: app.id, path: realm, type: type, after: after, limit: limit)
                return try JSONBody.response(AdminAPI.ExportPage(documents: page.documents, next: page.next, schema: page.schema))
            } catch let error as ServerStoreError {
                throw ServerError(.notFound, error.message)
            }
        }
    }

    /// A compact import body (``DataImportBody``) read and framed; its header decoded.
    /// - Throws: `ServerError.badRequest` for a body past the size limit, framing that does not
    ///   add up, or a header that is not the JSON expected.
    static func compactImport(_ request: Request) async throws -> (DataImportRequest, [UInt8], DataImportBody.Batch) {
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.body.collect(upTo: maxImportRequestBytes).readableBytesView)
        } catch {
            throw ServerError(.badRequest, "the request body is larger than \(maxImportRequestBytes) bytes")
        }
        let batch = try DataImportBody.read(bytes, maxDocuments: SyncCoordinator.maxImportBatch)
        let headerBytes = bytes[batch.header]
        guard JSONNesting.isWithin(headerBytes) else {
            throw ServerError(.badRequest, "the import header nests deeper than \(JSONNesting.maxDepth) levels")
        }
        let header: ImportHeader
        do {
            header = try JSONDecoder().decode(ImportHeader.self, from: Data(headerBytes))
        } catch {
            throw ServerError(.badRequest, "malformed import header: it must be a JSON object with a string \"type\"")
        }
        return (DataImportRequest(type: header.type, documents: [], partitionKey: header.partitionKey, realm: header.realm,
                                  schema: header.schema ?? []), bytes, batch)
    }

    struct ImportHeader: Decodable {
        var type: String
        var partitionKey: String?
        var realm: String?
        var schema: [ObjectSchema]?
    }

    struct ImportRequest: Decodable {
        var type: String
        var documents: [String]
        var partitionKey: String?
        var realm: String?
        var schema: [ObjectSchema]?
    }
}
