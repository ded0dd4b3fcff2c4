import Foundation

/// Resolving key paths and converting constants.
extension QueryBinder {
    /// Follows a key path until its end, or until it reaches a collection that must be quantified.
    mutating func walk(_ side: Side) throws(QueryError) -> Resolved {
        guard case .path(var current, var cursor, var rest) = side.kind else {
            guard case .resolved(let scalar, let cursor) = side.kind else { fatalError("unreachable") }
            return .single(scalar, cursor)
        }
        var consumed = side.consumed
        func label() -> String { consumed.isEmpty ? root : QueryKeyPath(elements: consumed).description }
        func notApplicable(_ what: String, needs: String, at range: SourceRange) -> QueryError {
            QueryError(.invalidOperation,
                       "'\(what)' needs \(needs), but '\(label())' is \(QueryParser.article(cursor.name))", at: range)
        }

        while let element = rest.first {
            rest = rest.dropFirst()
            // A collection reached by this element: its remaining operators are applied below.
            var reached: (collection: BoundQueryCollection, element: Cursor)?
            switch element.component {
            case .property(let name):
                guard case .object(let type) = cursor else {
                    throw QueryError(.unknownProperty,
                                     "'\(label())' is \(QueryParser.article(cursor.name)) and has no property '\(name)'",
                                     at: element.range)
                }
                guard let property = schema[type]?[property: name] else {
                    guard let backlink = backlinks[type]?.first(where: { $0.name == name }) else {
                        throw QueryError(.unknownProperty, "'\(type)' has no property '\(name)'", at: element.range)
                    }
                    consumed.append(element)
                    reached = try backlinkCollection(to: type, from: backlink.originType, through: backlink.originProperty,
                                                     base: current, at: element.range)
                    break
                }
                consumed.append(element)
                let valueCursor: Cursor = property.type == .object ? .object(property.objectType ?? "") : .value(property.type)
                if property.isSingle {
                    current = .property(current, owner: type, property)
                    cursor = valueCursor
                    continue
                }
                var collection = BoundQueryCollection(base: current, owner: type, property: property, keys: false, context: 0)
                var elementCursor = valueCursor
                if property.collection == .map, let next = rest.first {
                    switch next.component {
                    case .keys:
                        collection.keys = true
                        elementCursor = .value(.string)
                        consumed.append(next)
                        rest = rest.dropFirst()
                    case .values:
                        consumed.append(next)
                        rest = rest.dropFirst()
                    case .key(let key), .property(let key):
                        consumed.append(next)
                        rest = rest.dropFirst()
                        current = .mapValue(current, owner: type, property, key: key)
                        cursor = valueCursor
                        continue
                    default: break
                    }
                }
                reached = (collection, elementCursor)
            case .links(let origin, let name):
                guard case .object(let type) = cursor else {
                    throw notApplicable("@links", needs: "an object", at: element.range)
                }
                consumed.append(element)
                reached = try backlinkCollection(to: type, from: origin, through: name, base: current, at: element.range)
            case .allLinks:
                guard case .object(let type) = cursor else {
                    throw notApplicable("@links", needs: "an object", at: element.range)
                }
                guard let next = rest.first, next.component == .count || next.component == .size else {
                    throw QueryError(.invalidOperation,
                                     "'@links' needs '.@count' or a type and property ('@links.Type.property')", at: element.range)
                }
                try checkBacklinkTarget(type, at: element.range)
                var counts: [BoundScalar] = []
                for origin in schema.objectSchemas where !origin.isEmbedded {
                    for property in origin.properties where property.type == .object && property.objectType == type {
                        counts.append(.count(BoundQueryCollection(base: current, owner: origin.name, property: property, keys: false,
                                                             context: newContext(), backlink: backlinkTarget(type))))
                    }
                }
                consumed.append(element)
                consumed.append(next)
                rest = rest.dropFirst()
                current = counts.isEmpty ? .constant(.int(0)) : .total(counts)
                cursor = .value(.int)
                continue
            case .variable(let name):
                throw QueryError(.syntaxError, "the variable '$\(name)' can only start a key path", at: element.range)
            case .size:
                guard cursor == .value(.string) || cursor == .value(.data) else {
                    throw notApplicable("@size", needs: "a string, data, list, set or map", at: element.range)
                }
                consumed.append(element)
                current = .size(current)
                cursor = .value(.int)
                continue
            case .type:
                guard cursor == .value(.any) else {
                    throw notApplicable("@type", needs: "an AnyRealmValue", at: element.range)
                }
                consumed.append(element)
                current = .typeName(current)
                cursor = .value(.string)
                continue
            case .count:
                throw notApplicable("@count", needs: "a list, set or map", at: element.range)
            case .sum, .average, .minimum, .maximum:
                throw notApplicable(QueryKeyPath.name(of: element.component), needs: "a list, set or map",
                                    at: element.range)
            case .keys, .values:
                throw notApplicable(QueryKeyPath.name(of: element.component), needs: "a map", at: element.range)
            case .key(let key) where cursor == .value(.any):
                consumed.append(element)
                current = .mixedElement(current, .key(key))
                continue
            case .index(let index) where cursor == .value(.any):
                consumed.append(element)
                current = .mixedElement(current, .index(index))
                continue
            case .allElements where cursor == .value(.any):
                if let next = rest.first {
                    switch next.component {
                    case .key, .index, .allElements, .type: break
                    default:
                        throw QueryError(.unsupported, "'\(QueryKeyPath.name(of: next.component))' after '[*]' is not supported; "
                                         + "compare the elements, as in '\(label())[*] == 1'", at: next.range)
                    }
                }
                consumed.append(element)
                reached = (BoundQueryCollection(mixedElementsOf: current, context: 0), .value(.any))
            case .key:
                throw notApplicable(QueryKeyPath.name(of: element.component), needs: "a map or an AnyRealmValue", at: element.range)
            case .index, .allElements:
                throw notApplicable(QueryKeyPath.name(of: element.component), needs: "an AnyRealmValue", at: element.range)
            }
            guard var (collection, elementCursor) = reached else { continue }
            if let next = rest.first {
                switch next.component {
                case .count, .size:
                    consumed.append(next)
                    rest = rest.dropFirst()
                    current = .count(collection)
                    cursor = .value(.int)
                    continue
                case .sum, .average, .minimum, .maximum:
                    let collectionLabel = label()
                    consumed.append(next)
                    rest = rest.dropFirst()
                    collection.context = newContext()
                    let elements = Side(kind: .path(base: .context(collection.context), cursor: elementCursor, rest: rest),
                                        range: side.range, label: side.label, consumed: consumed)
                    rest = []
                    (current, cursor) = try aggregate(next, of: collection, elements: elements, label: collectionLabel)
                    continue
                default: break
                }
            }
            collection.context = newContext()
            let elements = Side(kind: .path(base: .context(collection.context), cursor: elementCursor, rest: rest),
                                range: side.range, label: side.label, consumed: consumed)
            return .multi(collection, element: elements)
        }
        return .single(current, cursor)
    }

    /// The objects of `origin` whose link `name` points at the object `base` (of type `target`).
    private mutating func backlinkCollection(to target: String, from origin: String, through name: String, base: BoundScalar,
                                    at range: SourceRange) throws(QueryError) -> (collection: BoundQueryCollection, element: Cursor) {
        try checkBacklinkTarget(target, at: range)
        guard let originSchema = schema[origin] else {
            throw QueryError(.unknownType, "unknown object type '\(origin)' in '@links.\(origin).\(name)'", at: range)
        }
        guard !originSchema.isEmbedded else {
            throw QueryError(.unsupported, "backlinks from embedded objects ('\(origin)') cannot be queried", at: range)
        }
        guard let property = originSchema[property: name], property.type == .object, property.objectType == target else {
            throw QueryError(.unknownProperty, "'\(origin)' has no property '\(name)' linking to '\(target)'", at: range)
        }
        // Its own context even for `@count`: the SQL of a backlink collection always names its rows.
        let collection = BoundQueryCollection(base: base, owner: origin, property: property, keys: false, context: newContext(),
                                         backlink: backlinkTarget(target))
        return (collection, .object(origin))
    }

    private func checkBacklinkTarget(_ target: String, at range: SourceRange) throws(QueryError) {
        if schema[target]?.isEmbedded == true {
            throw QueryError(.unsupported, "the backlinks of embedded objects ('\(target)') cannot be queried", at: range)
        }
    }

    private func backlinkTarget(_ target: String) -> BoundQueryCollection.Backlink {
        BoundQueryCollection.Backlink(target: target, primaryKey: schema[target]?.primaryKey)
    }

    /// `@sum`, `@avg`, `@min` or `@max` of the elements of `collection`.
    private mutating func aggregate(_ element: QueryKeyPath.Element, of collection: BoundQueryCollection, elements: Side,
                                    label: String) throws(QueryError) -> (BoundScalar, Cursor) {
        let name = QueryKeyPath.name(of: element.component)
        guard case .single(let scalar, let cursor) = try walk(elements) else {
            throw QueryError(.invalidOperation,
                             "'\(name)' needs one value per element of '\(label)', but the key path goes through another collection",
                             at: element.range)
        }
        guard case .value(let type) = cursor else {
            throw QueryError(.invalidOperation,
                             "'\(name)' of '\(label)' needs a property to aggregate, like '\(label).\(name).<property>'",
                             at: element.range)
        }
        let numeric: [PropertyType] = [.int, .double, .float, .decimal128]
        let kind: BoundAggregate
        let result: PropertyType
        switch element.component {
        case .sum:
            kind = .sum
            result = type == .int ? .int : type == .decimal128 ? .decimal128 : .double
        case .average:
            kind = .average
            result = type == .decimal128 ? .decimal128 : .double
        case .minimum:
            kind = .minimum
            result = type
        default:
            kind = .maximum
            result = type
        }
        let allowed = kind == .minimum || kind == .maximum ? numeric + [.date] : numeric
        guard allowed.contains(type) else {
            throw QueryError(.invalidOperation,
                             "'\(name)' needs \(kind == .sum || kind == .average ? "numbers" : "numbers or dates"), "
                                 + "but '\(label)' holds \(type.rawValue) values", at: element.range)
        }
        return (.aggregate(kind, collection, element: scalar, type: type), .value(result))
    }

    /// Converts a constant to the type of the key path it is compared with.
    func coerce(_ value: Value, to cursor: Cursor, path: Side, constant: Side) throws(QueryError) -> Value {
        let mismatch = QueryError(.typeMismatch,
                                  "cannot compare '\(path.label)' (\(cursor.name)) with \(constant.label) (\(value.kindName))",
                                  at: constant.range)
        if value.isNull { return .null }
        switch cursor {
        case .null, .list, .geometry:
            return value
        case .object(let type):
            if case .link(let link) = value, link.objectType == type { return value }
            throw mismatch
        case .value(.any):
            // A mixed value compares with a constant of any kind (QueryOrdering decides how).
            guard value.isMixedStorable else { throw mismatch }
            return value
        case .value(let type):
            switch (type, value) {
            case (.int, .int), (.double, .double), (.float, .float), (.string, .string), (.bool, .bool),
                 (.date, .date), (.data, .data), (.objectId, .objectId), (.UUID, .uuid), (.decimal128, .decimal):
                return value
            case (.int, .double), (.int, .float):
                let d = value.numericDouble ?? 0
                return d.rounded() == d && abs(d) < 9.2e18 ? .int(Int64(d)) : .double(d)
            case (.double, .int), (.double, .float):
                return .double(value.numericDouble ?? 0)
            case (.float, .int), (.float, .double):
                return .float(Float(value.numericDouble ?? 0))
            case (.decimal128, .int(let i)):
                return .decimal(Decimal128(Int(i)))
            case (.decimal128, .double), (.decimal128, .float):
                let d = value.numericDouble ?? 0
                return .decimal(Decimal128(d))
            case (.objectId, .string(let s)):
                guard let oid = try? ObjectId(string: s) else { throw mismatch }
                return .objectId(oid)
            case (.UUID, .string(let s)):
                guard let uuid = UUID(uuidString: s) else { throw mismatch }
                return .uuid(uuid)
            default:
                throw mismatch
            }
        }
    }

    /// Two key paths (or two constants) must hold the same kind of value; numbers of any width mix.
    func checkCompatible(_ l: Operand, _ r: Operand) throws(QueryError) {
        let numeric: [PropertyType] = [.int, .double, .float]
        switch (l.cursor, r.cursor) {
        case (.null, _), (_, .null): return
        case (.value(.any), _), (_, .value(.any)): return
        case (.value(let a), .value(let b)) where a == b || (numeric.contains(a) && numeric.contains(b)): return
        case (.object(let a), .object(let b)) where a == b: return
        default:
            throw QueryError(.typeMismatch,
                             "cannot compare '\(l.side.label)' (\(l.cursor.name)) with '\(r.side.label)' (\(r.cursor.name))",
                             at: r.side.range)
        }
    }
}
