/// Finds the stored property an app means by `name` on objects of `objectType`, or `nil` when the
/// name means none (it is then kept as written, and binding reports it if it is wrong).
///
/// An app may call a property by another name than the one stored and synced (Realm's
/// `propertiesMapping()`); queries are written with the app's names and run with the stored ones.
package typealias QueryNameResolver = (_ objectType: String, _ name: String) -> Property?

extension QueryExpression {
    /// The same query with every property name replaced by the stored name `resolve` gives,
    /// following links and collections from `objectType`.
    ///
    /// ```swift
    /// let query = try QueryExpression.parse("name == 'Ann' SORT(name ASC)")
    /// query.resolvingNames(from: "Person") { _, name in name == "name" ? fullName : nil }
    /// // full_name == "Ann" SORT(full_name ASC)
    /// ```
    package func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryExpression {
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
    package func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryPredicate {
        resolvingNames(from: objectType, resolve, variables: [:])
    }

    /// `variables`: the object type of each enclosing SUBQUERY variable's elements, when known.
    func resolvingNames(from objectType: String, _ resolve: QueryNameResolver, variables: [String: String]) -> QueryPredicate {
        let kind: Kind
        switch self.kind {
        case .constant: kind = self.kind
        case .and(let a, let b):
            kind = .and(a.resolvingNames(from: objectType, resolve, variables: variables),
                        b.resolvingNames(from: objectType, resolve, variables: variables))
        case .or(let a, let b):
            kind = .or(a.resolvingNames(from: objectType, resolve, variables: variables),
                       b.resolvingNames(from: objectType, resolve, variables: variables))
        case .not(let a): kind = .not(a.resolvingNames(from: objectType, resolve, variables: variables))
        case .comparison(var comparison):
            comparison.lhs = comparison.lhs.resolvingNames(from: objectType, resolve, variables: variables)
            comparison.rhs = comparison.rhs.resolvingNames(from: objectType, resolve, variables: variables)
            kind = .comparison(comparison)
        }
        return QueryPredicate(kind, range: range)
    }
}

extension QueryOperand {
    func resolvingNames(from objectType: String, _ resolve: QueryNameResolver, variables: [String: String] = [:]) -> QueryOperand {
        switch kind {
        case .keyPath(let path):
            return QueryOperand(.keyPath(path.resolving(from: objectType, resolve, variables: variables).path), range: range)
        case .subquery(var subquery):
            let (collection, elementType) = subquery.collection.resolving(from: objectType, resolve, variables: variables)
            subquery.collection = collection
            var inner = variables
            inner[subquery.variable] = elementType
            subquery.predicate = subquery.predicate.resolvingNames(from: objectType, resolve, variables: inner)
            return QueryOperand(.subquery(subquery), range: range)
        case .value, .geometry:
            return self
        }
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
    package func resolvingNames(from objectType: String, _ resolve: QueryNameResolver) -> QueryKeyPath {
        resolving(from: objectType, resolve, variables: [:]).path
    }

    /// The path with stored names, and the object type it ends at (`nil` when it ends at values or a
    /// name `resolve` does not know).
    func resolving(from objectType: String, _ resolve: QueryNameResolver,
                   variables: [String: String]) -> (path: QueryKeyPath, type: String?) {
        var result = elements
        var current: String? = objectType
        var position = 0
        if case .variable(let name)? = result.first?.component {
            current = variables[name]
            position = 1
        }
        while position < result.count, let type = current {
            defer { position += 1 }
            switch result[position].component {
            case .links(let origin, let name):
                let property = resolve(origin, name)
                result[position].component = .links(type: origin, property: property?.name ?? name)
                current = property == nil ? nil : origin
            case .allLinks, .variable:
                current = nil
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
            case .count, .size, .keys, .type, .index, .allElements:
                current = nil
            case .sum, .average, .minimum, .maximum, .values, .key:
                continue
            }
        }
        return (QueryKeyPath(elements: result), position >= result.count ? current : nil)
    }
}
