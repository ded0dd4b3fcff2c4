import Foundation

public typealias MongoInsertBlock = @Sendable (Result<AnyBSON, Error>) -> Void
public typealias MongoInsertManyBlock = @Sendable (Result<[AnyBSON], Error>) -> Void
public typealias MongoFindBlock = @Sendable (Result<[Document], Error>) -> Void
public typealias MongoFindOneBlock = @Sendable (Result<Document?, Error>) -> Void
public typealias MongoCountBlock = @Sendable (Result<Int, Error>) -> Void
public typealias MongoUpdateBlock = @Sendable (Result<UpdateResult, Error>) -> Void

/// A collection of remote data access: the objects of one type of the app, read and written on
/// the server under the app's rules (a user reads only what sync would let it read; a write the
/// rules refuse fails). Writes go into the app's sync history, so devices download them.
///
/// ```swift
/// let id = try await tasks.insertOne(["name": "Buy milk", "owner": .string(user.id)])
/// let result = try await tasks.updateOneDocument(filter: ["_id": id], update: ["$set": ["done": true]])
/// ```
public final class MongoCollection: Sendable {
    /// The collection's (the object type's) name.
    public let name: String
    let database: MongoDatabase

    init(database: MongoDatabase, name: String) {
        self.database = database
        self.name = name
    }

    // MARK: Reading

    /// The documents matching `filter` (`[:]`: all), as `options` limit, project and sort them.
    public func find(filter: Document, options: FindOptions = FindOptions()) async throws -> [Document] {
        try documents(try await call("find", ["filter": .document(filter)] + Self.fields(options)))
    }

    /// The first document matching `filter`, or nil.
    public func findOneDocument(filter: Document, options: FindOptions = FindOptions()) async throws -> Document? {
        var body = Self.fields(options)
        body["limit"] = nil
        return try document(try await call("findOne", ["filter": .document(filter)] + body))
    }

    /// The documents an aggregation pipeline of `$match $sort $skip $limit $project` stages gives.
    public func aggregate(pipeline: [Document]) async throws -> [Document] {
        try documents(try await call("aggregate", ["pipeline": .array(pipeline.map { .document($0) })]))
    }

    /// How many documents match `filter`, counting at most `limit` (nil: all).
    public func count(filter: Document, limit: Int? = nil) async throws -> Int {
        let answer = try await call("count", ["filter": .document(filter), "limit": limit.map { .int64(Int64($0)) } ?? .null])
        guard let count = answer.asInt() else { throw Self.unexpected("count") }
        return count
    }

    // MARK: Writing

    /// Inserts `document` (an ObjectId `_id` is made when it has none) and returns its `_id`.
    public func insertOne(_ document: Document) async throws -> AnyBSON {
        let answer = try await call("insertOne", ["document": .document(document)])
        guard let id = answer.documentValue?["insertedId"] ?? nil else { throw Self.unexpected("insertOne") }
        return id
    }

    /// Inserts `documents` (all or none) and returns their `_id`s.
    public func insertMany(_ documents: [Document]) async throws -> [AnyBSON] {
        let answer = try await call("insertMany", ["documents": .array(documents.map { .document($0) })])
        guard let ids = answer.documentValue?["insertedIds"]??.arrayValue else { throw Self.unexpected("insertMany") }
        return ids.compactMap { $0 }
    }

    /// Deletes the first document matching `filter`; returns how many were deleted (0 or 1).
    public func deleteOneDocument(filter: Document) async throws -> Int {
        try deletedCount(try await call("deleteOne", ["filter": .document(filter)]))
    }

    /// Deletes every document matching `filter`; returns how many were deleted.
    public func deleteManyDocuments(filter: Document) async throws -> Int {
        try deletedCount(try await call("deleteMany", ["filter": .document(filter)]))
    }

    /// Applies `update` (`$set $unset $inc $push`) to the first document matching `filter`;
    /// with `upsert`, inserts one when none matches.
    public func updateOneDocument(filter: Document, update: Document, upsert: Bool? = nil) async throws -> UpdateResult {
        try updateResult(try await call("updateOne", ["filter": .document(filter), "update": .document(update), "upsert": .bool(upsert ?? false)]))
    }

    /// Applies `update` to every document matching `filter`.
    public func updateManyDocuments(filter: Document, update: Document, upsert: Bool? = nil) async throws -> UpdateResult {
        try updateResult(try await call("updateMany", ["filter": .document(filter), "update": .document(update), "upsert": .bool(upsert ?? false)]))
    }

    /// Updates the first document matching `filter` and returns it as it was (or, with
    /// `shouldReturnNewDocument`, as it is now).
    public func findOneAndUpdate(filter: Document, update: Document, options: FindOneAndModifyOptions = .init()) async throws -> Document? {
        try document(try await call("findOneAndUpdate", ["filter": .document(filter), "update": .document(update)] + Self.fields(options)))
    }

    /// Replaces the first document matching `filter` (its `_id` stays).
    public func findOneAndReplace(filter: Document, replacement: Document, options: FindOneAndModifyOptions = .init()) async throws -> Document? {
        try document(try await call("findOneAndReplace", ["filter": .document(filter), "replacement": .document(replacement)] + Self.fields(options)))
    }

    /// Deletes the first document matching `filter` and returns it.
    public func findOneAndDelete(filter: Document, options: FindOneAndModifyOptions = .init()) async throws -> Document? {
        try document(try await call("findOneAndDelete", ["filter": .document(filter)] + Self.fields(options)))
    }

    // MARK: Completion handlers

    @preconcurrency
    public func insertOne(_ document: Document, _ completion: @escaping MongoInsertBlock) {
        let document = Unchecked(document)
        run(completion) { try await self.insertOne(document.value) }
    }

    @preconcurrency
    public func insertMany(_ documents: [Document], _ completion: @escaping MongoInsertManyBlock) {
        let documents = Unchecked(documents)
        run(completion) { try await self.insertMany(documents.value) }
    }

    @preconcurrency
    public func find(filter: Document, options: FindOptions = FindOptions(), _ completion: @escaping MongoFindBlock) {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        run(completion) { try await self.find(filter: filter.value, options: options.value) }
    }

    @preconcurrency
    public func findOneDocument(filter: Document, options: FindOptions = FindOptions(), _ completion: @escaping MongoFindOneBlock) {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        run(completion) { try await self.findOneDocument(filter: filter.value, options: options.value) }
    }

    @preconcurrency
    public func aggregate(pipeline: [Document], _ completion: @escaping MongoFindBlock) {
        let pipeline = Unchecked(pipeline)
        run(completion) { try await self.aggregate(pipeline: pipeline.value) }
    }

    @preconcurrency
    public func count(filter: Document, limit: Int? = nil, _ completion: @escaping MongoCountBlock) {
        let filter = Unchecked(filter)
        run(completion) { try await self.count(filter: filter.value, limit: limit) }
    }

    @preconcurrency
    public func deleteOneDocument(filter: Document, _ completion: @escaping MongoCountBlock) {
        let filter = Unchecked(filter)
        run(completion) { try await self.deleteOneDocument(filter: filter.value) }
    }

    @preconcurrency
    public func deleteManyDocuments(filter: Document, _ completion: @escaping MongoCountBlock) {
        let filter = Unchecked(filter)
        run(completion) { try await self.deleteManyDocuments(filter: filter.value) }
    }

    @preconcurrency
    public func updateOneDocument(filter: Document, update: Document, upsert: Bool = false, _ completion: @escaping MongoUpdateBlock) {
        let (filter, update) = (Unchecked(filter), Unchecked(update))
        run(completion) { try await self.updateOneDocument(filter: filter.value, update: update.value, upsert: upsert) }
    }

    @preconcurrency
    public func updateManyDocuments(filter: Document, update: Document, upsert: Bool = false, _ completion: @escaping MongoUpdateBlock) {
        let (filter, update) = (Unchecked(filter), Unchecked(update))
        run(completion) { try await self.updateManyDocuments(filter: filter.value, update: update.value, upsert: upsert) }
    }

    @preconcurrency
    public func findOneAndUpdate(filter: Document, update: Document, options: FindOneAndModifyOptions = .init(),
                                 _ completion: @escaping MongoFindOneBlock) {
        let (filter, update, options) = (Unchecked(filter), Unchecked(update), Unchecked(options))
        run(completion) { try await self.findOneAndUpdate(filter: filter.value, update: update.value, options: options.value) }
    }

    @preconcurrency
    public func findOneAndReplace(filter: Document, replacement: Document, options: FindOneAndModifyOptions = .init(),
                                  _ completion: @escaping MongoFindOneBlock) {
        let (filter, replacement, options) = (Unchecked(filter), Unchecked(replacement), Unchecked(options))
        run(completion) { try await self.findOneAndReplace(filter: filter.value, replacement: replacement.value, options: options.value) }
    }

    @preconcurrency
    public func findOneAndDelete(filter: Document, options: FindOneAndModifyOptions = .init(), _ completion: @escaping MongoFindOneBlock) {
        let (filter, options) = (Unchecked(filter), Unchecked(options))
        run(completion) { try await self.findOneAndDelete(filter: filter.value, options: options.value) }
    }

    // MARK: Plumbing

    /// Values that cross into the call's task: documents and options are not `Sendable`.
    struct Unchecked<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    private func run<T>(_ completion: @escaping @Sendable (Result<T, Error>) -> Void, _ body: @escaping @Sendable () async throws -> T) {
        _Concurrency.Task {
            do {
                let value = try await body()
                completion(.success(value))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Sends `action` with the body's members (and the collection's names) and reads the answer.
    func call(_ action: String, _ members: [String: AnyBSON]) async throws -> AnyBSON {
        var fields: [String: ExtendedJSON] = members.mapValues(ExtendedJSON.init)
        fields["service"] = .string(database.client.name)
        fields["database"] = .string(database.name)
        fields["collection"] = .string(name)
        let body = try JSONEncoder().encode(fields)
        let data = try await database.client.user.remoteDataRequest(action, body: body)
        do {
            return try JSONDecoder().decode(ExtendedJSON.self, from: data).bson
        } catch {
            throw Self.unexpected(action)
        }
    }

    static func fields(_ options: FindOptions) -> [String: AnyBSON] {
        var out: [String: AnyBSON] = [:]
        if options.limit > 0 { out["limit"] = .int64(Int64(options.limit)) }
        if let projection = options.projection { out["projection"] = .document(projection) }
        if !options.sorting.isEmpty { out["sort"] = .array(options.sorting.map { .document($0) }) }
        return out
    }

    static func fields(_ options: FindOneAndModifyOptions) -> [String: AnyBSON] {
        var out: [String: AnyBSON] = ["upsert": .bool(options.upsert), "returnNewDocument": .bool(options.shouldReturnNewDocument)]
        if let projection = options.projection { out["projection"] = .document(projection) }
        if !options.sorting.isEmpty { out["sort"] = .array(options.sorting.map { .document($0) }) }
        return out
    }

    private func documents(_ answer: AnyBSON) throws -> [Document] {
        guard let items = answer.arrayValue else { throw Self.unexpected("a query") }
        return items.compactMap { $0?.documentValue }
    }

    private func document(_ answer: AnyBSON) throws -> Document? {
        if answer == .null { return nil }
        guard let document = answer.documentValue else { throw Self.unexpected("a query") }
        return document
    }

    private func deletedCount(_ answer: AnyBSON) throws -> Int {
        guard let count = answer.documentValue?["deletedCount"]??.asInt() else { throw Self.unexpected("a delete") }
        return count
    }

    private func updateResult(_ answer: AnyBSON) throws -> UpdateResult {
        guard let fields = answer.documentValue, let matched = fields["matchedCount"]??.asInt(),
              let modified = fields["modifiedCount"]??.asInt() else { throw Self.unexpected("an update") }
        return UpdateResult(matchedCount: UInt(max(0, matched)), modifiedCount: UInt(max(0, modified)), documentId: fields["upsertedId"] ?? nil)
    }

    static func unexpected(_ what: String) -> AppError {
        AppError(.httpRequestFailed, "the server's answer to \(what) is not what the protocol says")
    }
}

private func + (lhs: [String: AnyBSON], rhs: [String: AnyBSON]) -> [String: AnyBSON] {
    lhs.merging(rhs) { a, _ in a }
}
