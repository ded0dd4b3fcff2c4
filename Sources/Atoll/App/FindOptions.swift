import Foundation

/// Options of `find` and `findOneDocument`: how many documents, which fields, in what order.
///
/// ```swift
/// let options = FindOptions(10, ["name": 1], [["priority": -1]])
/// let top = try await tasks.find(filter: [:], options: options)
/// ```
public final class FindOptions {
    /// Most documents to return; 0: no limit.
    public var limit: Int = 0
    /// `["field": 1, …]` returns those fields (and `_id`), `["field": 0]` all others.
    public var projection: Document?
    /// Sort keys in order, each `["field": 1]` (ascending) or `["field": -1]`.
    public var sorting: [Document] = []

    /// One document of sort keys (a dictionary has no order: use ``sorting`` for several).
    @available(*, deprecated, message: "Use `sorting`")
    public var sort: Document? {
        get { sorting.first }
        set { sorting = newValue.map { [$0] } ?? [] }
    }

    public init() {}

    public convenience init(_ limit: Int = 0, _ projection: Document? = nil, _ sorting: [Document] = []) {
        self.init()
        self.limit = limit
        self.projection = projection
        self.sorting = sorting
    }

    public convenience init(limit: Int, projection: Document?, sorting: [Document]) {
        self.init(limit, projection, sorting)
    }

    @available(*, deprecated, message: "Use init(limit:projection:sorting:)")
    public convenience init(_ limit: Int?, _ projection: Document?, _ sort: Document?) {
        self.init(limit ?? 0, projection, sort.map { [$0] } ?? [])
    }

    @available(*, deprecated, message: "Use init(limit:projection:sorting:)")
    public convenience init(limit: Int?, projection: Document?, sort: Document?) {
        self.init(limit ?? 0, projection, sort.map { [$0] } ?? [])
    }
}

/// Options of `findOneAndUpdate`, `findOneAndReplace` and `findOneAndDelete`.
///
/// ```swift
/// let options = FindOneAndModifyOptions(nil, [], true, true)   // upsert, return the new document
/// ```
public final class FindOneAndModifyOptions {
    public var projection: Document?
    public var sorting: [Document] = []
    /// Insert a document when none matches.
    public var upsert = false
    /// Return the document after the change (else before it).
    public var shouldReturnNewDocument = false

    @available(*, deprecated, message: "Use `sorting`")
    public var sort: Document? {
        get { sorting.first }
        set { sorting = newValue.map { [$0] } ?? [] }
    }

    public init() {}

    public convenience init(_ projection: Document?, _ sorting: [Document] = [], _ upsert: Bool = false, _ shouldReturnNewDocument: Bool = false) {
        self.init()
        self.projection = projection
        self.sorting = sorting
        self.upsert = upsert
        self.shouldReturnNewDocument = shouldReturnNewDocument
    }

    public convenience init(projection: Document?, sorting: [Document], upsert: Bool, shouldReturnNewDocument: Bool) {
        self.init(projection, sorting, upsert, shouldReturnNewDocument)
    }

    @available(*, deprecated, message: "Use init(projection:sorting:upsert:shouldReturnNewDocument:)")
    public convenience init(_ projection: Document?, _ sort: Document?, _ upsert: Bool = false, _ shouldReturnNewDocument: Bool = false) {
        self.init(projection, sort.map { [$0] } ?? [], upsert, shouldReturnNewDocument)
    }

    @available(*, deprecated, message: "Use init(projection:sorting:upsert:shouldReturnNewDocument:)")
    public convenience init(projection: Document?, sort: Document?, upsert: Bool = false, shouldReturnNewDocument: Bool = false) {
        self.init(projection, sort.map { [$0] } ?? [], upsert, shouldReturnNewDocument)
    }
}

/// What `updateOneDocument` and `updateManyDocuments` did.
public final class UpdateResult: Sendable {
    /// Documents the filter matched.
    public let matchedCount: UInt
    /// Documents changed.
    public let modifiedCount: UInt
    /// The `_id` of the document an upsert inserted, nil when none was.
    public let documentId: AnyBSON?
    /// ``documentId`` when it is an ObjectId.
    public var objectId: ObjectId? { documentId?.objectIdValue }

    init(matchedCount: UInt, modifiedCount: UInt, documentId: AnyBSON?) {
        self.matchedCount = matchedCount
        self.modifiedCount = modifiedCount
        self.documentId = documentId
    }
}
