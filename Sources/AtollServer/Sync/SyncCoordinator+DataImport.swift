import AtollCore
import Foundation

/// One batch of an operator's data import (`atoll data import`): mongoexport documents of one
/// type, each with its index in the file for the report.
public struct DataImportRequest: Sendable {
    public var type: String
    /// Extended JSON documents (one each), unparsed: the server parses them within ``JSONLimits``.
    public var documents: [String]
    /// Partition-based apps: the member whose value chooses each document's realm.
    public var partitionKey: String?
    /// One realm for every document (`s:tasks`, `flx`); neither this nor a partition key: `flx`.
    public var realm: String?
    /// Types and properties to add to the realm's schema first (the schema `atoll apps import`
    /// or `atoll data export` wrote), for a realm no device has declared its models in yet.
    public var schema: [ObjectSchema]

    public init(type: String, documents: [String], partitionKey: String? = nil, realm: String? = nil, schema: [ObjectSchema] = []) {
        self.type = type
        self.documents = documents
        self.partitionKey = partitionKey
        self.realm = realm
        self.schema = schema
    }
}

/// What a batch did: every document is imported or refused with its reason.
public struct DataImportOutcome: Sendable {
    public struct Refusal: Sendable, Hashable {
        public var index: Int
        public var error: DataImportError
    }
    public struct UnresolvedLink: Sendable, Hashable {
        public var index: Int
        public var target: ObjectLink
    }
    public var imported = 0
    public var refused: [Refusal] = []
    /// Links whose target object exists neither in the realm nor in the batch: written (Atoll
    /// keeps a link to a missing object, which resolves when the target arrives), and reported.
    public var unresolvedLinks: [UnresolvedLink] = []
    /// Members the schema has no property for, and how many documents had each.
    public var ignoredFields: [String: Int] = [:]
    /// The realms written, by path.
    public var realms: Set<String> = []
}

extension SyncCoordinator {
    /// Most documents one batch may carry.
    public static let maxImportBatch = 2_000

    /// Writes a batch of documents into the app's history as a server write: per realm one
    /// changeset, integrated like an upload from a client file of its own (schema check, rebase,
    /// validation, fan-out to the bound sessions), so devices download it like any change.
    /// Documents with a primary key already present overwrite its fields: importing a batch
    /// twice leaves the same objects.
    public func importDocuments(appID: String, _ request: DataImportRequest, limits: JSONLimits = JSONLimits()) async throws -> DataImportOutcome {
        guard request.documents.count <= Self.maxImportBatch else {
            throw DataImportError(.tooLarge, "a batch holds at most \(Self.maxImportBatch) documents")
        }
        var outcome = DataImportOutcome()
        // Each document parsed once, and placed in its realm.
        var byRealm: [String: [(index: Int, node: JSONNode)]] = [:]
        for (index, text) in request.documents.enumerated() {
            switch Self.place(text, request, limits: limits) {
            case .success(let (path, node)): byRealm[path, default: []].append((index, node))
            case .failure(let error): outcome.refused.append(.init(index: index, error: error))
            }
        }
        for (path, documents) in byRealm.sorted(by: { $0.key < $1.key }) {
            let target = try await realm(appID: appID, path: path)
            try await importDocuments(documents, request, into: target, outcome: &outcome)
        }
        outcome.refused.sort { $0.index < $1.index }
        return outcome
    }

    /// A document parsed, and the path of the realm it goes into.
    static func place(_ text: String, _ request: DataImportRequest, limits: JSONLimits) -> Result<(String, JSONNode), DataImportError> {
        do throws(DataImportError) {
            let node = try JSONNode.parse(Array(text.utf8), limits: limits)
            if let key = request.partitionKey { return .success((try DocumentTyping.partition(of: node, key: key).path, node)) }
            return .success((request.realm ?? FlexibleSync.realmPath, node))
        } catch {
            return .failure(error)
        }
    }

    private func importDocuments(_ documents: [(index: Int, node: JSONNode)], _ request: DataImportRequest,
                                 into realm: StoredRealm, outcome: inout DataImportOutcome) async throws {
        // The schema: the realm's, plus what the request adds.
        var history = try await currentSchema(of: realm)
        var schemaInstructions: [Instruction] = []
        for type in request.schema {
            if let known = history.types[type.name] {
                for property in type.properties where known[property: property.name] == nil {
                    schemaInstructions.append(.addColumn(type: type.name, property))
                }
            } else {
                schemaInstructions.append(.addTable(type))
            }
        }
        let added = Changeset(version: 0, timestamp: 0, instructions: schemaInstructions)
        do { try history.validate(added) } catch {
            throw DataImportError(.unknownType, "the schema given does not fit the realm's: \(error)")
        }
        let typing = DocumentTyping(schema: history.types, skippedField: request.partitionKey)
        var typed: [(index: Int, document: TypedDocument)] = []
        for (index, node) in documents {
            switch Result(catching: { () throws(DataImportError) in try typing.type(node, as: request.type) }) {
            case .success(let document):
                typed.append((index, document))
                for field in document.ignoredFields { outcome.ignoredFields[field, default: 0] += 1 }
            case .failure(let error):
                outcome.refused.append(.init(index: index, error: error))
            }
        }
        guard !typed.isEmpty || !schemaInstructions.isEmpty else { return }
        // Links: to an object of the realm, or of this batch.
        let state = try await snapshot(of: realm).state
        let inBatch = Set(typed.map(\.document.id))
        for (index, document) in typed {
            for link in document.links {
                let target = ObjectID(type: link.objectType, primaryKey: link.primaryKey)
                if !inBatch.contains(target), state.object(target) == nil {
                    outcome.unresolvedLinks.append(.init(index: index, target: link))
                }
            }
        }
        do {
            try await integrateImport(schemaInstructions + typed.flatMap(\.document.instructions), into: realm)
            outcome.imported += typed.count
        } catch let error as MergeError where typed.count > 1 {
            // One document the realm refuses (a value past the limits …) must not take the batch
            // with it: each one on its own, so the report names exactly the refused ones.
            _ = error
            if !schemaInstructions.isEmpty { try await integrateImport(schemaInstructions, into: realm) }
            for (index, document) in typed {
                do {
                    try await integrateImport(document.instructions, into: realm)
                    outcome.imported += 1
                } catch let error as MergeError {
                    outcome.refused.append(.init(index: index, error: DataImportError(.wrongType, "the realm refused it: \(error)")))
                }
            }
        }
        outcome.realms.insert(realm.path)
    }

    /// One server-made changeset integrated through the upload path, from a client file of its own.
    private func integrateImport(_ instructions: [Instruction], into realm: StoredRealm) async throws {
        let file = try await store.newClientFile(realmID: realm.id, salt: Int64.random(in: 1...Int64.max), now: now())
        let base = try await store.latestServerVersion(realmID: realm.id)
        let changeset = Changeset(version: 1, timestamp: timestamp(), fileIdent: file.ident.ident, instructions: instructions)
        _ = try await integrate(UploadBatch(fileIdent: file.ident.ident, baseServerVersion: base, changesets: [changeset]), into: realm)
    }
}

/// One page of an export: canonical Extended JSON documents of one type in one realm.
public struct DataExportPage: Sendable {
    public var documents: [String]
    /// Where the next page starts; nil after the last.
    public var next: Int?
    /// The type's schema, for a later import into an app that has none yet.
    public var schema: [ObjectSchema]
}

extension SyncCoordinator {
    /// The realms of an app that hold data, by path.
    public func dataRealms(appID: String) async throws -> [String] {
        try await store.realms(appID: appID).map(\.path).sorted()
    }

    /// Objects of `type` (every top-level type when nil: then `schema` lists them) in the realm at
    /// `path`, from its newest state, `limit` from position `after` in primary key order.
    public func exportDocuments(appID: String, path: String, type: String?, after: Int, limit: Int) async throws -> DataExportPage {
        guard let realm = try await storedRealm(appID: appID, path: path) else {
            throw ServerStoreError(.notFound, "app \(appID) has no realm \(path)")
        }
        let state = try await snapshot(of: realm).state
        let schema = state.schema.values.sorted { $0.name < $1.name }
        guard let type else { return DataExportPage(documents: [], next: nil, schema: schema) }
        guard let objectSchema = state.schema[type], !objectSchema.isEmbedded else {
            throw ServerStoreError(.notFound, "realm \(path) has no top-level type \(type)")
        }
        let keys = state.primaryKeys(of: type)
        let start = min(max(after, 0), keys.count)
        let end = min(start + max(1, limit), keys.count)
        let documents = keys[start..<end].compactMap { key in
            state.object(ObjectID(type: type, primaryKey: key)).map { ExtendedJSON.canonical($0, of: objectSchema, schema: state.schema) }
        }
        return DataExportPage(documents: documents, next: end < keys.count ? end : nil, schema: schema)
    }
}
