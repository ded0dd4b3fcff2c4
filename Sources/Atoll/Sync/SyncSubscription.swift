import AtollCore
import Foundation

/// A query to subscribe to: the objects of `T` it matches are synced to the realm.
///
/// ```swift
/// subscriptions.append(QuerySubscription<Task>(name: "all_tasks"))                  // every task
/// subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "Frodo" })
/// subscriptions.append(QuerySubscription<Task>(where: "priority > %d", 5))
/// ```
public struct QuerySubscription<T: Object> {
    public typealias QueryFunction = (Query<T>) -> Query<Bool>

    let name: String?
    let objectType: String
    /// The query text sent to the server.
    let query: String

    /// A subscription to the objects `query` matches, or to every object of `T` without a query.
    public init(name: String? = nil, query: QueryFunction? = nil) {
        self.name = name
        objectType = T.className()
        self.query = query.map(SubscriptionQuery.text) ?? SubscriptionQuery.all
    }

    /// A subscription to the objects `query` matches.
    public init(name: String? = nil, query: QueryFunction) {
        self.name = name
        objectType = T.className()
        self.query = SubscriptionQuery.text(query)
    }

    /// A subscription to the objects a query in the Realm Query Language matches.
    ///
    /// An invalid query stops the program with a message saying what is wrong and where.
    public init(name: String? = nil, where predicateFormat: String, _ args: Any...) {
        self.name = name
        objectType = T.className()
        query = SubscriptionQuery.text(predicateFormat, args, type: T.self)
    }
}

/// A subscription of a committed set: read it, remove it, or change its query inside an update.
public struct SyncSubscription {
    let box: SubscriptionSetBox
    let id: ObjectId
    private let snapshot: StoredSubscription

    init(box: SubscriptionSetBox, stored: StoredSubscription) {
        self.box = box
        id = stored.id
        snapshot = stored
    }

    /// The subscription as it is now (inside an update, with the changes made so far).
    private var stored: StoredSubscription { box.subscription(id) ?? snapshot }

    /// The name given when it was added, if any.
    public var name: String? { stored.name }

    /// When the subscription was added.
    public var createdAt: Date { stored.createdAt }

    /// When its query last changed.
    public var updatedAt: Date { stored.updatedAt }

    /// The object type it subscribes to.
    public var objectClassName: String { stored.objectType }

    /// Its query, as sent to the server.
    public var queryString: String { stored.query }

    /// Replaces the query (every object of the type when `query` is `nil`).
    ///
    /// - Precondition: inside `update`, and `type` is the subscription's type.
    public func updateQuery<T: Object>(toType type: T.Type, where query: ((Query<T>) -> Query<Bool>)? = nil) {
        box.updateQuery(of: id, objectType: T.className(), query: query.map(SubscriptionQuery.text) ?? SubscriptionQuery.all)
    }

    /// Replaces the query.
    ///
    /// ```swift
    /// subscriptions.first(named: "mine")?.updateQuery(toType: Task.self) { $0.owner == "Sam" }
    /// ```
    /// - Precondition: inside `update`, and `type` is the subscription's type.
    public func updateQuery<T: Object>(toType type: T.Type, where query: (Query<T>) -> Query<Bool>) {
        box.updateQuery(of: id, objectType: T.className(), query: SubscriptionQuery.text(query))
    }

    /// Replaces the query with a query in the Realm Query Language.
    ///
    /// - Precondition: inside `update`.
    public func updateQuery(to predicateFormat: String, _ args: Any...) {
        box.updateQuery(of: id, objectType: stored.objectType, query: SubscriptionQuery.text(
            predicateFormat, args, objectType: stored.objectType,
            classes: box.realm.coordinator.table(named: stored.objectType)?.classInfo.map { ClassInfo.closure(of: [$0.type]) } ?? []))
    }
}

/// Subscription queries as the text the server receives: printed from the query's syntax tree,
/// arguments inlined, so equal queries give equal text whichever way they were written.
enum SubscriptionQuery {
    /// Every object of the type.
    static let all = QueryPredicate.truePredicate.description

    /// The query's text with stored property names: the server knows a property renamed by
    /// `propertiesMapping()` by its stored name.
    static func text<T: Object>(_ query: (Query<T>) -> Query<Bool>) -> String {
        let infos = ClassInfo.closure(of: [T.self])
        let predicate = query(Query<T>(.path(QueryKeyPath([]), collection: nil))).predicate
        return predicate.resolvingNames(from: ClassInfo.of(T.self).schema.name, ClassInfo.resolver(infos)).description
    }

    static func text<T: Object>(_ predicateFormat: String, _ args: [Any], type: T.Type) -> String {
        text(predicateFormat, args, objectType: ClassInfo.of(T.self).schema.name, classes: ClassInfo.closure(of: [T.self]))
    }

    /// `predicateFormat` of `objectType`, resolved on `classes` (the type's class and those it
    /// links to; none for a type without a class).
    static func text(_ predicateFormat: String, _ args: [Any], objectType: String, classes: [ClassInfo]) -> String {
        do {
            let values = try args.map(QueryArguments.value)
            return try QueryExpression.parse(predicateFormat, arguments: values)
                .resolvingNames(from: objectType, ClassInfo.resolver(classes)).description
        } catch {
            preconditionFailure("Invalid subscription query '\(predicateFormat)': \(error)")
        }
    }
}
