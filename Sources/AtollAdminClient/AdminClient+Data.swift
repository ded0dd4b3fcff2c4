import AtollCore
import Foundation
import NIOCore

/// `atoll data import` / `atoll data export` over the admin API (docs/from-atlas.md, "Data").
extension AdminClient {
    /// What the server said about one batch.
    public typealias ImportBatchResult = AdminAPI.ImportBatchResult

    /// Sends one batch of Extended JSON documents of `type`. `schema` is a JSON array of Atoll
    /// object schemas (what `atoll data export` writes as `schema.json`), or nil.
    public func importBatch(app: String, type: String, documents: [String], partitionKey: String? = nil, realm: String? = nil,
                            schema: Data? = nil) async throws -> ImportBatchResult {
        var body = DataImportBody.Writer(header: try Self.importHeader(type: type, partitionKey: partitionKey, realm: realm, schema: schema))
        for document in documents { body.append(document.utf8) }
        return try await importBatch(app: app, body: body.finish())
    }

    /// Sends one batch already written as a compact body (``DataImportBody``, its header from
    /// ``importHeader(type:partitionKey:realm:schema:)``): the documents' bytes go as the file has them.
    public func importBatch(app: String, body: [UInt8]) async throws -> ImportBatchResult {
        let data = try await request("POST", "apps/\(app)/data/import", body: ByteBuffer(bytes: body), contentType: DataImportBody.contentType)
        return try decodeAnswer(ImportBatchResult.self, from: data, to: "POST", "data/import")
    }

    /// The header of a compact import body: the JSON object of ``importBody(type:documents:partitionKey:realm:schema:)``
    /// without its documents.
    public static func importHeader(type: String, partitionKey: String?, realm: String?, schema: Data?) throws -> [UInt8] {
        Array(try importBody(type: type, documents: nil, partitionKey: partitionKey, realm: realm, schema: schema))
    }

    /// The body of `data/import`, written directly (JSONSerialization's boxing of 2,000 document
    /// strings a batch cost a tenth of an import's time). `schema` must be JSON; it goes in as it is.
    /// Without `documents`, the object has no `documents` member (a compact body's header).
    static func importBody(type: String, documents: [String]?, partitionKey: String?, realm: String?, schema: Data?) throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity((documents ?? []).reduce(64) { $0 + $1.utf8.count + 8 } + (schema?.count ?? 0))
        out += Array(#"{"type":"#.utf8)
        ExtendedJSON.appendQuoted(type, to: &out)
        if let documents {
            out += Array(#","documents":["#.utf8)
            for (index, document) in documents.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                ExtendedJSON.appendQuoted(document, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        if let partitionKey {
            out += Array(#","partitionKey":"#.utf8)
            ExtendedJSON.appendQuoted(partitionKey, to: &out)
        }
        if let realm {
            out += Array(#","realm":"#.utf8)
            ExtendedJSON.appendQuoted(realm, to: &out)
        }
        if let schema {
            _ = try JSONSerialization.jsonObject(with: schema)  // refused here, not by the server
            out += Array(#","schema":"#.utf8)
            out += schema
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// One page of canonical Extended JSON documents of `type` in the realm at `realm`; without
    /// a type, only the realm's schema (a JSON array of Atoll object schemas).
    public struct ExportPage: Sendable {
        public var documents: [String]
        public var next: Int?
        public var schema: Data
    }

    public func exportPage(app: String, realm: String, type: String?, after: Int = 0, limit: Int = 1_000) async throws -> ExportPage {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "realm", value: realm), URLQueryItem(name: "after", value: "\(after)"),
                                 URLQueryItem(name: "limit", value: "\(limit)")] + (type.map { [URLQueryItem(name: "type", value: $0)] } ?? [])
        let path = "apps/\(app)/data/export?" + (components.percentEncodedQuery ?? "")
        let page = try decodeAnswer(AdminAPI.ExportPage<AdminAPI.JSON>.self, from: try await request("GET", path), to: "GET", path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return ExportPage(documents: page.documents, next: page.next, schema: try encoder.encode(page.schema))
    }

    /// The paths of the app's realms.
    public func dataRealms(app: String) async throws -> [String] {
        try await request("GET", "apps/\(app)/data/realms", as: AdminAPI.Realms.self).realms
    }
}
