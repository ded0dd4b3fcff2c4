import AtollCore
import Foundation

/// Key paths, bulk reads and writes by name: the parts of Foundation's key-value coding that Realm
/// objects answer (without the Objective-C runtime).
extension ObjectBase {
    /// The value at a dot-separated key path: `"owner.name"` follows a link, `"dogs.name"` gives
    /// the names of every dog, `"dogs.@count"` and `"dogs.@sum.age"` aggregate a collection.
    ///
    /// ```swift
    /// person.value(forKeyPath: "dogs.@max.age") as? Int
    /// ```
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCoding.value(of: self, path: keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
    }

    /// Sets the property at the end of a key path: `"owner.name"` sets the linked object's name
    /// (nothing happens when the link is nil); `"dogs.age"` sets the age of every dog.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        var components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = components.removeLast()
        guard !components.isEmpty else { return setValue(value, forKey: last) }
        switch KeyValueCoding.value(of: self, path: components) {
        case let object as ObjectBase: object.setValue(value, forKey: last)
        case let collection as KeyValueCodingCollection: collection.kvcSetEach(value, forKey: last)
        case nil: return
        case let other?:
            preconditionFailure("Cannot set '\(last)' on the \(type(of: other)) at '\(components.joined(separator: "."))'.")
        }
    }

    /// Sets several properties by their Swift names.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// The values of several properties by their Swift names, `NSNull` standing for nil.
    ///
    /// ```swift
    /// let fields = dog.dictionaryWithValues(forKeys: dog.objectSchema.properties.map(\.name))
    /// ```
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        Dictionary(keys.map { ($0, value(forKey: $0) ?? NSNull()) }, uniquingKeysWith: { first, _ in first })
    }

    /// Sets a property by name; a wrong name or value fails the write (managed) or traps (unmanaged).
    func kvcSet(_ value: Any?, forKey key: String) {
        let info = ClassInfo.of(type(of: self))
        guard let state = _managedState else {
            do {
                try info.setValue(value ?? NSNull(), forKey: key, of: self)
            } catch {
                preconditionFailure("\(error)")
            }
            return
        }
        guard let transaction = state.realm.requireWrite("modify '\(info.schema.name).\(key)'") else { return }
        do {
            try info.setValue(value ?? NSNull(), forKey: key, of: self)
        } catch let error as Realm.Error {
            transaction.fail(error)
        } catch {
            transaction.fail(Realm.Error(.invalidValue, "\(error)"))
        }
    }
}

/// A collection that key-value coding reads element by element (`List`, `MutableSet`, `Results`).
protocol KeyValueCodingCollection {
    /// The elements, objects or values, in order.
    var kvcElements: [Any] { get }
    /// Sets `key` on every element (`setValue(_:forKey:)` of the collection).
    func kvcSetEach(_ value: Any?, forKey key: String)
}

/// Evaluates key paths the way Foundation's key-value coding does on objects and arrays.
enum KeyValueCoding {
    /// `path` from `object`.
    static func value(of object: ObjectBase, path: [String]) -> Any? {
        guard let first = path.first else { return object }
        let value = first == "self" ? object : object.value(forKey: first)
        return follow(value, Array(path.dropFirst()))
    }

    /// The rest of a path from a value met on the way.
    static func follow(_ value: Any?, _ rest: [String]) -> Any? {
        guard !rest.isEmpty, let value else { return value }
        switch value {
        case let object as ObjectBase: return self.value(of: object, path: rest)
        case let collection as KeyValueCodingCollection: return self.value(of: collection.kvcElements, path: rest)
        case let map as any KeyValueCodingMap: return follow(map.kvcValue(forKey: rest[0]), Array(rest.dropFirst()))
        default:
            guard rest == ["self"] else {
                preconditionFailure("A \(type(of: value)) has no property '\(rest[0])'.")
            }
            return value
        }
    }

    /// `path` applied to every element: an array of the results (`NSNull` for nil), or one value
    /// for a collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`).
    static func value(of elements: [Any], path: [String]) -> Any {
        guard let first = path.first else { return elements }
        guard first.hasPrefix("@") else {
            return elements.map { follow($0, path) ?? NSNull() }
        }
        if first == "@count" { return elements.count }
        let rest = Array(path.dropFirst())
        let values: [Any] = elements.compactMap { element in
            let value: Any? = rest.isEmpty ? element : follow(element, rest)
            return value is NSNull ? nil : value
        }
        switch first {
        case "@sum": return sum(values, operator: first)
        case "@avg":
            guard !values.isEmpty else { return NSNull() }
            if values.allSatisfy({ $0 is Decimal128 }) {
                return (values as! [Decimal128]).reduce(Decimal128(0), +) / Decimal128(values.count)
            }
            return numbers(values, operator: first).reduce(0, +) / Double(values.count)
        case "@min", "@max":
            let ordered = values.compactMap { value in AtollCore.Value(any: value).map { (value, $0) } }
            guard ordered.count == values.count else {
                preconditionFailure("\(first) needs values that can be ordered")
            }
            let pick = ordered.min { a, b in
                let order = a.1.compare(to: b.1)
                return first == "@min" ? order == .orderedAscending : order == .orderedDescending
            }
            return pick?.0 ?? NSNull()
        default:
            preconditionFailure("Unsupported collection operator '\(first)'; use @count, @sum, @avg, @min or @max.")
        }
    }

    private static func sum(_ values: [Any], operator name: String) -> Any {
        if values.allSatisfy({ $0 is Int }) { return (values as! [Int]).reduce(0, +) }
        if !values.isEmpty, values.allSatisfy({ $0 is Decimal128 }) { return (values as! [Decimal128]).reduce(Decimal128(0), +) }
        return numbers(values, operator: name).reduce(0, +)
    }

    private static func numbers(_ values: [Any], operator name: String) -> [Double] {
        values.map { value in
            guard let number = AtollCore.Value(any: value)?.numericValue else {
                preconditionFailure("\(name) needs numbers; a \(type(of: value)) was found")
            }
            return number
        }
    }
}

/// A map that key-value coding reads by key.
protocol KeyValueCodingMap {
    func kvcValue(forKey key: String) -> Any?
}
