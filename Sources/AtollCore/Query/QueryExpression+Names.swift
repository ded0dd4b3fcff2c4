/// Finds the stored property an app means by `name` on objects of `objectType`, or `nil` when the
/// name means none (it is then kept as written, and binding reports it if it is wrong).
///
/// An app may call a property by another name than the one stored and synced (Realm's
/// `propertiesMapping()`); queries are written with the app's names and run with the stored ones.
public typealias QueryNameResolver = (_ objectType: String, _ name: String) -> Property?

extension QueryExpression {
    /// The same query with every property name replaced by the stored name `resolve` gives,
    /// following links and collections from `objectType`.
    ///
    /// ```swift
    /// let query = try QueryExpression.parse("name == 'Ann' SORT(name ASC)")
    /// query.resolvingNames(from: "Person") { _, name in name == "name" ? fullName : nil }
    /// // full_name == "Ann" SORT(full_name ASC)
    /// ```
    public func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryExpression {
        QueryExpression(
            predicate: predicate.resolvingNames(from: objectType, resolve),
            clauses: clauses.map { clause in
                switch clause {
                case .sort(let keys):
                    .sort(keys.map { QuerySortKey($0.keyPath.resolvingNames(from: objectType, resolve), ascending: $0.ascending) })
                case .distinct(let paths):
                    .distinct(paths.map { $0.resolvingNames(from: objectType, resolve) })
                case .limit:
                    clause
                }
            })
    }
}

extension QueryPredicate {
    /// The same predicate with stored property names; see ``QueryExpression/resolvingNames(from:_:)``.
    public func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryPredicate {
        let kind: Kind
        switch self.kind {
        case .constant: kind = self.kind
        case .and(let a, let b): kind = .and(a.resolvingNames(from: objectType, resolve), b.resolvingNames(from: objectType, resolve))
        case .or(let a, let b): kind = .or(a.resolvingNames(from: objectType, resolve), b.resolvingNames(from: objectType, resolve))
        case .not(let a): kind = .not(a.resolvingNames(from: objectType, resolve))
        case .comparison(var comparison):
            comparison.lhs = comparison.lhs.resolvingNames(from: objectType, resolve)
            comparison.rhs = comparison.rhs.resolvingNames(from: objectType, resolve)
            kind = .comparison(comparison)
        }
        return QueryPredicate(kind, range: range)
    }
}

extension QueryOperand {
    func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryOperand {
        guard case .keyPath(let path) = kind else { return self }
        return QueryOperand(.keyPath(path.resolvingNames(from: objectType, resolve)), range: range)
    }
}

extension QueryKeyPath {
    /// The path with stored property names: each name is resolved on the type reached so far
    /// (through links, and through the elements of lists, sets and maps); map keys are kept. The
    /// rest of the path is kept as written from the first name `resolve` does not know.
    ///
    /// ```swift
    /// QueryKeyPath("owner.name").resolvingNames(from: "Dog", resolve)   // owner.full_name
    /// ```
    public func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryKeyPath {
        var result = elements
        var current: String? = objectType
        var position = 0
        while position < result.count, let type = current {
            defer { position += 1 }
            switch result[position].component {
            case .property(let name):
                guard let property = resolve(type, name) else {
                    current = nil
                    continue
                }
                result[position].component = .property(property.name)
                current = property.type == .object ? property.objectType : nil
                if property.collection == .map, position + 1 < result.count {
                    // A map's next component is a key (`attrs.color`, `attrs['color']`) or an operator.
                    switch result[position + 1].component {
                    case .property, .key: position += 1
                    case .keys: current = nil
                    default: break
                    }
                }
            case .count, .size, .keys:
                current = nil
            case .sum, .average, .minimum, .maximum, .values, .key:
                continue
            }
        }
        return QueryKeyPath(elements: result)
    }
}
