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
        return try await importDocuments(appID: appID, placed: Self.place(request.documents.map { Array($0.utf8) }, request, limits: limits),
                                         request, limits: limits)
    }

    /// ``importDocuments(appID:_:limits:)`` for documents already placed (``place(_:_:limits:)``,
    /// which needs no actor: the admin route runs it before it gets here). `request.documents` is not read.
    package func importDocuments(appID: String, placed: [Result<PlacedDocument, DataImportError>],
                                _ request: DataImportRequest, limits: JSONLimits = JSONLimits()) async throws -> DataImportOutcome {
        guard placed.count <= Self.maxImportBatch else {
            throw DataImportError(.tooLarge, "a batch holds at most \(Self.maxImportBatch) documents")
        }
        var outcome = DataImportOutcome()
        var byRealm: [String: [(index: Int, bytes: [UInt8])]] = [:]
        for (index, result) in placed.enumerated() {
            switch result {
            case .success(let document): byRealm[document.realm, default: []].append((index, document.bytes))
            case .failure(let error): outcome.refused.append(.init(index: index, error: error))
            }
        }
        for (path, documents) in byRealm.sorted(by: { $0.key < $1.key }) {
            let target = try await realm(appID: appID, path: path)
            try await importDocuments(documents, request, into: target, limits: limits, outcome: &outcome)
        }
        outcome.refused.sort { $0.index < $1.index }
        return outcome
    }

    /// One document's bytes and the path of the realm it goes into.
    package struct PlacedDocument: Sendable {
        package var realm: String
        package var bytes: [UInt8]
    }

    /// The realm each document goes into (or why it is refused). Only a partition-based import
    /// reads the documents here (their partition key member, every document checked whole);
    /// the others are parsed once, where they are typed.
    package static func place(_ documents: [some Collection<UInt8>], _ request: DataImportRequest,
                             limits: JSONLimits = JSONLimits()) -> [Result<PlacedDocument, DataImportError>] {
        documents.map { place(Array($0), request, limits: limits) }
    }

    /// A document placed in its realm.
    static func place(_ bytes: [UInt8], _ request: DataImportRequest, limits: JSONLimits) -> Result<PlacedDocument, DataImportError> {
        guard let key = request.partitionKey else { return .success(PlacedDocument(realm: request.realm ?? FlexibleSync.realmPath, bytes: bytes)) }
        do throws(DataImportError) {
            return .success(PlacedDocument(realm: try DocumentTyping.partition(ofBytes: bytes, key: key, limits: limits).path, bytes: bytes))
        } catch {
            return .failure(error)
        }
    }

    private func importDocuments(_ documents: [(index: Int, bytes: [UInt8])], _ request: DataImportRequest,
                                 into realm: StoredRealm, limits jsonLimits: JSONLimits, outcome: inout DataImportOutcome) async throws {
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
        // Each document checked alone where it is typed (``ImportChangeset/Checker``): one it
        // refuses (a value past the limits …) must not take the batch with it.
        let checker = ImportChangeset.Checker(schema: history, version: 1, limits: limits, offset: schemaInstructions.count)
        let batch = await Self.type(documents, typing, as: request.type, limits: jsonLimits, checking: checker, after: schemaInstructions)
        outcome.refused += batch.refused
        for typed in batch.typed {
            for field in typed.document.ignoredFields { outcome.ignoredFields[field, default: 0] += 1 }
        }
        guard !batch.typed.isEmpty || !schemaInstructions.isEmpty else { return }
        // The state is read (and, on first use, built) only for a batch with links to check: an
        // import of plain documents leaves a realm no session materialized without it.
        let known = batch.typed.contains(where: { !$0.document.links.isEmpty })
            ? try await reportUnresolvedLinks(of: batch.typed, in: realm, outcome: &outcome)
            : schemas[realm.id]?.version ?? 0
        if !batch.instructions.isEmpty {
            try await appendImport(batch.instructions, schemaInstructions: batch.addsSchema ? nil : schemaInstructions.count,
                                   into: realm, after: known)
        }
        outcome.imported += batch.imported
        outcome.realms.insert(realm.path)
    }

    /// A batch's documents typed and checked: the import changeset's instructions (the schema's
    /// first, then each document's that passed), every document typed (with its instructions in
    /// that array, not its own), and the refusals of typing and of the check.
    struct TypedBatch: Sendable {
        var instructions: [Instruction]
        /// Documents typed, in order, and whether the check let them in.
        var typed: [(index: Int, document: TypedDocument, admitted: Bool)] = []
        var refused: [DataImportOutcome.Refusal] = []
        /// Whether an admitted document held schema instructions (one typed never does).
        var addsSchema = false

        var imported: Int { typed.reduce(0) { $0 + ($1.admitted ? 1 : 0) } }
    }

    /// Each document typed (``DocumentTyping/type(bytes:as:limits:appendingTo:)``) straight into
    /// the batch's array after `leading` and checked there (``ImportChangeset/Checker``), in
    /// order; a large batch in two halves at once, off the coordinator, so a second core types
    /// and checks while the first does.
    static func type(_ documents: [(index: Int, bytes: [UInt8])], _ typing: DocumentTyping, as type: String, limits: JSONLimits,
                     checking checker: ImportChangeset.Checker, after leading: [Instruction]) async -> TypedBatch {
        @Sendable func typed(_ part: ArraySlice<(index: Int, bytes: [UInt8])>, after leading: [Instruction]) -> TypedBatch {
            var batch = TypedBatch(instructions: leading)
            batch.instructions.reserveCapacity(leading.count + part.count * 16)
            batch.typed.reserveCapacity(part.count)
            for (index, bytes) in part {
                let start = batch.instructions.count
                do throws(DataImportError) {
                    let document = try typing.type(bytes: bytes, as: type, limits: limits, appendingTo: &batch.instructions)
                    if let refusal = checker.admit(&batch.instructions, from: start, addsSchema: &batch.addsSchema) {
                        batch.refused.append(.init(index: index, error: DataImportError(.wrongType, "the realm refused it: \(refusal)")))
                        batch.typed.append((index, document, false))
                    } else {
                        batch.typed.append((index, document, true))
                    }
                } catch {
                    batch.refused.append(.init(index: index, error: error))
                }
            }
            return batch
        }
        guard documents.count >= 200 else { return typed(documents[...], after: leading) }
        let half = documents.count / 2
        async let first = typed(documents[..<half], after: leading)
        let second = typed(documents[half...], after: [])
        var batch = await first
        batch.instructions += second.instructions
        batch.typed += second.typed
        batch.refused += second.refused
        batch.addsSchema = batch.addsSchema || second.addsSchema
        return batch
    }

    /// Links to an object neither in the realm nor in the batch, reported (and kept); the
    /// version of the state looked in. No copy of the state outlives this: the import's own
    /// append, which changes the cached state, would otherwise copy all of it.
    private func reportUnresolvedLinks(of typed: [(index: Int, document: TypedDocument, admitted: Bool)], in realm: StoredRealm,
                                       outcome: inout DataImportOutcome) async throws -> Int64 {
        let snapshot = try await snapshot(of: realm)
        let inBatch = Set(typed.map(\.document.id))
        for (index, document, _) in typed {
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
    /// validation against the state, whose cached copy then applies it once. When its schema
    /// instructions are known to be its first `schemaInstructions`, the cached schema takes in those alone.
    private func appendImport(_ instructions: [Instruction], schemaInstructions: Int?, into realm: StoredRealm, after known: Int64) async throws {
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
        integrated(result, into: realm, schemaInstructions: schemaInstructions)
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
