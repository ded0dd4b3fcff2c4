import AtollCore
import Foundation

/// One batch of an operator's data import (`atoll data import`): mongoexport documents of one
/// type, each with its index in the file for the report.
package struct DataImportRequest: Sendable {
    package var type: String
    /// Extended JSON documents (one each), unparsed: the server parses them within ``JSONLimits``.
    package var documents: [String]
    /// Partition-based apps: the member whose value chooses each document's realm.
    package var partitionKey: String?
    /// One realm for every document (`s:tasks`, `flx`); neither this nor a partition key: `flx`.
    package var realm: String?
    /// Types and properties to add to the realm's schema first (the schema `atoll apps import`
    /// or `atoll data export` wrote), for a realm no device has declared its models in yet.
    package var schema: [ObjectSchema]

    package init(type: String, documents: [String], partitionKey: String? = nil, realm: String? = nil, schema: [ObjectSchema] = []) {
        self.type = type
        self.documents = documents
        self.partitionKey = partitionKey
        self.realm = realm
        self.schema = schema
    }
}

/// What a batch did: every document is imported or refused with its reason.
package struct DataImportOutcome: Sendable {
    package struct Refusal: Sendable, Hashable {
        package var index: Int
        package var error: DataImportError
    }
    package struct UnresolvedLink: Sendable, Hashable {
        package var index: Int
        package var target: ObjectLink
    }
    package var imported = 0
    package var refused: [Refusal] = []
    /// Links whose target object exists neither in the realm nor in the batch: written (Atoll
    /// keeps a link to a missing object, which resolves when the target arrives), and reported.
    package var unresolvedLinks: [UnresolvedLink] = []
    /// Members the schema has no property for, and how many documents had each.
    package var ignoredFields: [String: Int] = [:]
    /// The realms written, by path.
    package var realms: Set<String> = []
}

extension SyncCoordinator {
    /// Most documents one batch may carry.
    package static let maxImportBatch = 2_000

    /// Writes a batch of documents into the app's history as a server write: per realm one
    /// changeset, appended on the realm's newest version (``ImportChangeset`` says why it needs
    /// no rebase and no state-dependent validation), fanned out to the bound sessions, so devices
    /// download it like any change. Documents with a primary key already present overwrite its
    /// fields: importing a batch twice leaves the same objects.
    package func importDocuments(appID: String, _ request: DataImportRequest, limits: JSONLimits = JSONLimits()) async throws -> DataImportOutcome {
        guard request.documents.count <= Self.maxImportBatch else {
            throw DataImportError(.tooLarge, "a batch holds at most \(Self.maxImportBatch) documents")
        }
        return try await importDocuments(appID: appID, placed: Self.place(request.documents.map { Array($0.utf8) }, request, limits: limits), request)
    }

    /// ``importDocuments(appID:_:limits:)`` for documents already parsed and placed (``place(_:_:limits:)``,
    /// which needs no actor: the admin route runs it before it gets here). `request.documents` is not read.
    package func importDocuments(appID: String, placed: [Result<(String, JSONNode), DataImportError>],
                                _ request: DataImportRequest) async throws -> DataImportOutcome {
        guard placed.count <= Self.maxImportBatch else {
            throw DataImportError(.tooLarge, "a batch holds at most \(Self.maxImportBatch) documents")
        }
        var outcome = DataImportOutcome()
        var byRealm: [String: [(index: Int, node: JSONNode)]] = [:]
        for (index, result) in placed.enumerated() {
            switch result {
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

    /// Each document parsed once, and the path of the realm it goes into (or why it is refused).
    package static func place(_ documents: [some Collection<UInt8>], _ request: DataImportRequest,
                             limits: JSONLimits = JSONLimits()) -> [Result<(String, JSONNode), DataImportError>] {
        documents.map { place($0, request, limits: limits) }
    }

    /// A document parsed, and the path of the realm it goes into.
    static func place(_ bytes: some Collection<UInt8>, _ request: DataImportRequest, limits: JSONLimits) -> Result<(String, JSONNode), DataImportError> {
        do throws(DataImportError) {
            let node = try JSONNode.parse(bytes, limits: limits)
            if let key = request.partitionKey { return .success((try DocumentTyping.partition(of: node, key: key).path, node)) }
            return .success((request.realm ?? FlexibleSync.realmPath, node))
        } catch {
            return .failure(error)
        }
    }

    private func importDocuments(_ documents: [(index: Int, node: JSONNode)], _ request: DataImportRequest,
                                 into realm: StoredRealm, outcome: inout DataImportOutcome) async throws {
        // The schema: the realm's, plus what the request adds.
        let current = try await currentSchema(of: realm)
        var history = current
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
        let known = try await reportUnresolvedLinks(of: typed, in: realm, outcome: &outcome)
        var instructions = schemaInstructions
        instructions.reserveCapacity(typed.reduce(schemaInstructions.count) { $0 + $1.document.instructions.count })
        for (_, document) in typed { instructions += document.instructions }
        do {
            try ImportChangeset.check(Changeset(version: 1, timestamp: 0, instructions: instructions), schema: current, limits: limits)
        } catch {
            // One document the realm refuses (a value past the limits …) must not take the batch
            // with it: each one checked on its own, so the report names exactly the refused ones.
            instructions = schemaInstructions
            var kept: [(index: Int, document: TypedDocument)] = []
            for (index, document) in typed {
                do {
                    try ImportChangeset.check(Changeset(version: 1, timestamp: 0, instructions: schemaInstructions + document.instructions),
                                              schema: current, limits: limits)
                    kept.append((index, document))
                    instructions += document.instructions
                } catch {
                    outcome.refused.append(.init(index: index, error: DataImportError(.wrongType, "the realm refused it: \(error)")))
                }
            }
            typed = kept
        }
        if !instructions.isEmpty { try await appendImport(instructions, into: realm, after: known) }
        outcome.imported += typed.count
        outcome.realms.insert(realm.path)
    }

    /// Links to an object neither in the realm nor in the batch, reported (and kept); the
    /// version of the state looked in. No copy of the state outlives this: the import's own
    /// append, which changes the cached state, would otherwise copy all of it.
    private func reportUnresolvedLinks(of typed: [(index: Int, document: TypedDocument)], in realm: StoredRealm,
                                       outcome: inout DataImportOutcome) async throws -> Int64 {
        let snapshot = try await snapshot(of: realm)
        let inBatch = Set(typed.map(\.document.id))
        for (index, document) in typed {
            for link in document.links {
                let target = ObjectID(type: link.objectType, primaryKey: link.primaryKey)
                if !inBatch.contains(target), snapshot.state.object(target) == nil {
                    outcome.unresolvedLinks.append(.init(index: index, target: link))
                }
            }
        }
        return snapshot.version
    }

    /// One import changeset (checked by ``ImportChangeset/check(_:schema:limits:)``) appended on
    /// the realm's newest version, from a client file of its own: no history read, no rebase, no
    /// validation against the state, whose cached copy then applies it once.
    private func appendImport(_ instructions: [Instruction], into realm: StoredRealm, after known: Int64) async throws {
        let file = try await store.newClientFile(realmID: realm.id, salt: Int64.random(in: 1...Int64.max), now: now())
        let changeset = Changeset(version: 1, timestamp: timestamp(), fileIdent: file.ident.ident, instructions: instructions)
        uploadsInFlight[realm.appID, default: 0] += 1
        defer { uploadsInFlight[realm.appID, default: 1] -= 1 }
        let start = ContinuousClock.now
        // `historyAfter: .max`: the store reads no history for it (there is nothing to rebase over).
        let result = try await store.integrate(realmID: realm.id, fileIdent: file.ident.ident, baseServerVersion: known,
                                               historyAfter: .max) { input in
            guard input.epoch == realm.epoch else { throw StaleEpoch() }
            return [changeset]
        }
        metrics.integrationLatency.record(ContinuousClock.now - start)
        integrated(result, into: realm)
    }
}

/// One page of an export: canonical Extended JSON documents of one type in one realm.
package struct DataExportPage: Sendable {
    package var documents: [String]
    /// Where the next page starts; nil after the last.
    package var next: Int?
    /// The type's schema, for a later import into an app that has none yet.
    package var schema: [ObjectSchema]
}

extension SyncCoordinator {
    /// The realms of an app that hold data, by path.
    package func dataRealms(appID: String) async throws -> [String] {
        try await store.realms(appID: appID).map(\.path).sorted()
    }

    /// Objects of `type` (every top-level type when nil: then `schema` lists them) in the realm at
    /// `path`, from its newest state, `limit` from position `after` in primary key order.
    package func exportDocuments(appID: String, path: String, type: String?, after: Int, limit: Int) async throws -> DataExportPage {
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
