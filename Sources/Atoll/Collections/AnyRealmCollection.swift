import AtollCore
import Foundation

/// Any `RealmCollection` of `Element` behind one type: results, a list, a set or linking objects.
///
/// ```swift
/// var tasks: AnyRealmCollection<Task> = AnyRealmCollection(realm.objects(Task.self))
/// tasks = AnyRealmCollection(project.tasks)   // a List<Task>
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    let base: AnyRealmCollectionBox<Element>

    /// Wraps `base`.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        self.base = base as? AnyRealmCollection<Element> != nil
            ? (base as! AnyRealmCollection<Element>).base : RealmCollectionBox(base)
    }

    init(box: AnyRealmCollectionBox<Element>) { base = box }

    public var realm: Realm? { base.realm }
    public var isInvalidated: Bool { base.isInvalidated }
    public var isFrozen: Bool { base.isFrozen }
    public var description: String { base.description }

    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public var count: Int { base.count }
    public subscript(position: Int) -> Element { base[position] }

    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? { base.index(matching: predicateFormat, args) }

    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { base.filter(predicateFormat, args) }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { base.where(isIncluded) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        base.sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        base.sorted(by: Array(sortDescriptors))
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { base.distinct(by: Array(keyPaths)) }

    public func min<T: _PersistableScalar>(ofProperty property: String) -> T? { base.values(of: property).compactMap(T.init(_atollValue:)).min(by: Self.ascending) }
    public func max<T: _PersistableScalar>(ofProperty property: String) -> T? { base.values(of: property).compactMap(T.init(_atollValue:)).max(by: Self.ascending) }
    public func sum<T: _PersistableScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
        base.values(of: property).compactMap(T.init(_atollValue:)).reduce(.zero, +)
    }
    public func average<T: _PersistableScalar & BinaryFloatingPoint>(ofProperty property: String) -> T? {
        let values = base.values(of: property).compactMap(\.numericValue)
        return values.isEmpty ? nil : T(values.reduce(0, +) / Double(values.count))
    }

    private static func ascending<T: _PersistableScalar>(_ a: T, _ b: T) -> Bool {
        a._atollValue.compare(to: b._atollValue) == .orderedAscending
    }

    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void) -> NotificationToken {
        base.observe(keyPaths: keyPaths, on: queue) { change in block(change.map { AnyRealmCollection(box: $0) }) }
    }

    public func freeze() -> AnyRealmCollection<Element> { AnyRealmCollection(box: base.freeze()) }
    public func thaw() -> AnyRealmCollection<Element>? { base.thaw().map { AnyRealmCollection(box: $0) } }
}

/// The type-erased operations of a `RealmCollection` (``AnyRealmCollection``'s storage).
class AnyRealmCollectionBox<Element: RealmCollectionValue> {
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    var isFrozen: Bool { fatalError("abstract") }
    var description: String { fatalError("abstract") }
    var count: Int { fatalError("abstract") }
    subscript(position: Int) -> Element { fatalError("abstract") }
    func index(of object: Element) -> Int? { fatalError("abstract") }
    func index(matching predicateFormat: String, _ args: [Any]) -> Int? { fatalError("abstract") }
    func filter(_ predicateFormat: String, _ args: [Any]) -> Results<Element> { fatalError("abstract") }
    func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { fatalError("abstract") }
    func sorted(by descriptors: [SortDescriptor]) -> Results<Element> { fatalError("abstract") }
    func distinct(by keyPaths: [String]) -> Results<Element> { fatalError("abstract") }
    /// The non-null values of a property over the collection, for aggregates.
    func values(of property: String) -> [AtollCore.Value] { fatalError("abstract") }
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<AnyRealmCollectionBox<Element>>) -> Void) -> NotificationToken {
        fatalError("abstract")
    }
    func freeze() -> AnyRealmCollectionBox<Element> { fatalError("abstract") }
    func thaw() -> AnyRealmCollectionBox<Element>? { fatalError("abstract") }
    var handover: _Handover { fatalError("abstract") }
}

final class RealmCollectionBox<Base: RealmCollection>: AnyRealmCollectionBox<Base.Element> {
    let base: Base

    init(_ base: Base) { self.base = base }

    /// The collection as live results (every object, in the collection's order).
    private var results: Results<Base.Element> { base.filter("TRUEPREDICATE") }

    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override var isFrozen: Bool { base.isFrozen }
    override var description: String { base.description }
    override var count: Int { base.count }
    override subscript(position: Int) -> Base.Element { base[position] }
    override func index(of object: Base.Element) -> Int? { base.index(of: object) }
    override func index(matching predicateFormat: String, _ args: [Any]) -> Int? {
        guard let match = filter(predicateFormat, args).first else { return nil }
        return base.index(of: match)
    }
    override func filter(_ predicateFormat: String, _ args: [Any]) -> Results<Base.Element> {
        do {
            return try results.filter(query: predicateFormat, arguments: args)
        } catch {
            preconditionFailure("\(error)")
        }
    }
    override func `where`(_ isIncluded: (Query<Base.Element>) -> Query<Bool>) -> Results<Base.Element> { base.where(isIncluded) }
    override func sorted(by descriptors: [SortDescriptor]) -> Results<Base.Element> { base.sorted(by: descriptors) }
    override func distinct(by keyPaths: [String]) -> Results<Base.Element> { base.distinct(by: keyPaths) }
    override func values(of property: String) -> [AtollCore.Value] { results.core.aggregate(property) }
    override func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                          _ block: @escaping (RealmCollectionChange<AnyRealmCollectionBox<Base.Element>>) -> Void) -> NotificationToken {
        base.observe(keyPaths: keyPaths, on: queue) { change in block(change.map { RealmCollectionBox($0) }) }
    }
    override func freeze() -> AnyRealmCollectionBox<Base.Element> { RealmCollectionBox(base.freeze()) }
    override func thaw() -> AnyRealmCollectionBox<Base.Element>? { base.thaw().map { RealmCollectionBox($0) } }
    override var handover: _Handover {
        base._handover.map { ($0 as? Base).map { AnyRealmCollection(box: RealmCollectionBox($0)) } }
    }
}
