import Foundation

/// `atoll data import` / `atoll data export` over the admin API (docs/from-atlas.md, "Data").
extension AdminClient {
    /// What the server said about one batch.
    public struct ImportBatchResult: Codable, Sendable, Hashable {
        public struct Refusal: Codable, Sendable, Hashable { public var index: Int; public var code: String; public var path: String; public var message: String }
        public struct Link: Codable, Sendable, Hashable { public var index: Int; public var type: String; public var id: String }
        public var imported: Int
        public var refused: [Refusal]
        public var unresolvedLinks: [Link]
        public var ignoredFields: [String: Int]
        public var realms: [String]
    }

    /// Sends one batch of Extended JSON documents of `type`. `schema` is a JSON array of Atoll
    /// object schemas (what `atoll data export` writes as `schema.json`), or nil.
    public func importBatch(app: String, type: String, documents: [String], partitionKey: String? = nil, realm: String? = nil,
                            schema: Data? = nil) async throws -> ImportBatchResult {
        var body: [String: Any] = ["type": type, "documents": documents]
        if let partitionKey { body["partitionKey"] = partitionKey }
        if let realm { body["realm"] = realm }
        if let schema { body["schema"] = try JSONSerialization.jsonObject(with: schema) }
        let data = try await request("POST", "apps/\(app)/data/import", bodyData: try JSONSerialization.data(withJSONObject: body))
        return try decode(ImportBatchResult.self, data, "data/import")
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
        let data = try await request("GET", "apps/\(app)/data/export?" + (components.percentEncodedQuery ?? ""), bodyData: nil)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let documents = object["documents"] as? [String], let schema = object["schema"] else {
            throw AdminClientError(status: 200, message: "the server's answer to data/export is not what was expected")
        }
        return ExportPage(documents: documents, next: object["next"] as? Int,
                          schema: try JSONSerialization.data(withJSONObject: schema, options: [.prettyPrinted, .sortedKeys]))
    }

    /// The paths of the app's realms.
    public func dataRealms(app: String) async throws -> [String] {
        try decode([String: [String]].self, try await request("GET", "apps/\(app)/data/realms", bodyData: nil), "data/realms")["realms"] ?? []
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data, _ what: String) throws -> T {
        do { return try JSONDecoder().decode(T.self, from: data) } catch {
            throw AdminClientError(status: 200, message: "the server's answer to \(what) is not what was expected: \(error)")
        }
    }
}
