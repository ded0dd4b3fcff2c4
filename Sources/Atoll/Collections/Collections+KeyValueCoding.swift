import AtollCore
import Foundation

// Key-value coding on `List`, `MutableSet` and `Map`, with realm-swift's signatures: a list or a
// set answers for each of its elements; a map answers for the value under a key.

extension _PersistedElementCollection {
    /// The value of `key` for each element, in order (`NSNull` for nil); the key `"self"` gives
    /// the elements.
    ///
    /// ```swift
    /// let names = person.dogs.value(forKey: "name") as! [String]
    /// ```
    public func value(forKey key: String) -> [AnyObject] {
        KeyValueCoding.bulkValues(_elements.map { $0 as Any }, key: key, of: Element.self).map { $0 as AnyObject }
    }

    /// The value of a key path for each element (`"owner.name"`), or an aggregate of them
    /// (`"@count"`, `"@sum.age"`, `"@avg.age"`, `"@min.age"`, `"@max.age"`) as one element.
    public func value(forKeyPath keyPath: String) -> [AnyObject] {
        KeyValueCoding.bulkValues(_elements.map { $0 as Any }, keyPath: keyPath, of: Element.self).map { $0 as AnyObject }
    }
}

extension List: KeyValueCodingCollection {
    var kvcElements: [Any] { elements.map { $0 as Any } }
    func kvcSetEach(_ value: Any?, forKey key: String) { setValue(value, forKey: key) }

    /// Sets `key` to `value` on every element; `"self"` replaces every element of a list of
    /// values. On a managed list, only inside a write transaction.
    public func setValue(_ value: Any?, forKey key: String) {
        if key == "self" {
            guard !(Element.self is ObjectBase.Type) else {
                preconditionFailure("Cannot set 'self' on the objects of a List<\(Element.self)>.")
            }
            let element: Element
            do {
                element = try Element._atollFromAny(value ?? NSNull())
            } catch {
                preconditionFailure("Invalid value for List<\(Element.self)>: \(error)")
            }
            for position in indices { self[position] = element }
            return
        }
        KeyValueCoding.bulkSet(elements, value, forKey: key, realm: realm)
    }
}

extension MutableSet: KeyValueCodingCollection {
    var kvcElements: [Any] { elements.map { $0 as Any } }
    func kvcSetEach(_ value: Any?, forKey key: String) { setValue(value, forKey: key) }

    /// Sets `key` to `value` on every object of the set. On a managed set, only inside a write
    /// transaction.
    public func setValue(_ value: Any?, forKey key: String) {
        KeyValueCoding.bulkSet(elements, value, forKey: key, realm: realm)
    }
}

extension Map: KeyValueCodingMap {
    func kvcValue(forKey key: String) -> Any? {
        guard let entry = self[string: key] else { return nil }
        return KeyValueCoding.element(entry)
    }

    /// The value stored under `key`, or `nil` when there is none (`NSNull` for a stored nil).
    ///
    /// ```swift
    /// let score = scores.value(forKey: "alice") as? Int
    /// ```
    public func value(forKey key: String) -> AnyObject? {
        kvcValue(forKey: key).map { $0 as AnyObject }
    }

    /// The value at a key path that starts with a key: `"rex.name"` reads the name of the object
    /// stored under `rex`.
    public func value(forKeyPath keyPath: String) -> AnyObject? {
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return KeyValueCoding.follow(kvcValue(forKey: path[0]), Array(path.dropFirst())).map { $0 as AnyObject }
    }

    /// Stores `value` under `key`, or removes the key when `value` is nil. On a managed map, only
    /// inside a write transaction; a value of the wrong type fails it (see `ObjectBase.setValue`).
    public func setValue(_ value: Any?, forKey key: String) {
        guard let value else {
            self[string: key] = nil
            return
        }
        let converted: Value
        do {
            converted = try Value._atollFromAny(value)
        } catch {
            let error = Realm.Error(.invalidValue, "Invalid value '\(value)' of type '\(type(of: value))' for a Map<String, \(Value.self)>.",
                                    underlying: error as? any Error & Sendable)
            guard let realm else { preconditionFailure("\(error)") }
            realm.requireWrite("modify a map")?.fail(error)
            return
        }
        self[string: key] = converted
    }
}

extension KeyValueCoding {
    /// A collection element as key-value coding hands it out (an enum as its raw value, nil as
    /// `NSNull`).
    static func element(_ element: Any) -> Any {
        if case Optional<Any>.none = element { return NSNull() }
        if let persistableEnum = element as? any PersistableEnum { return persistableEnum.rawValue }
        return element
    }

    /// `key` read from every element; checks the name against the element class first, as Realm
    /// does, so an empty collection traps on a wrong name too.
    static func bulkValues(_ elements: [Any], key: String, of type: Any.Type) -> [Any] {
        if key == "self" { return elements.map(element) }
        guard let objectType = type as? ObjectBase.Type else {
            preconditionFailure("A collection of \(type) has no property '\(key)'; only 'self' can be read.")
        }
        let info = ClassInfo.of(objectType)
        let index = info.index(forKey: key)
        return elements.map { info.value(at: index, of: $0 as! ObjectBase) ?? NSNull() }
    }

    /// A key path read from every element, or one aggregate as a one-element array.
    static func bulkValues(_ elements: [Any], keyPath: String, of type: Any.Type) -> [Any] {
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if path.count == 1 { return bulkValues(elements, key: keyPath, of: type) }
        let result = value(of: elements.map(element), path: path)
        if path[0].hasPrefix("@") { return [result] }
        return result as! [Any]
    }

    /// Sets `key` on each of `objects` (taken before the first change, so a change that moves an
    /// object in or out of a query does not skip any).
    static func bulkSet<Element>(_ objects: [Element], _ value: Any?, forKey key: String, realm: Realm?) {
        guard let objectType = Element.self as? ObjectBase.Type else {
            preconditionFailure("A collection of \(Element.self) has no property '\(key)' to set.")
        }
        let info = ClassInfo.of(objectType)
        if let realm {
            // Outside a write this stops the program, even for an empty collection, as Realm does.
            guard let transaction = realm.requireWrite("modify '\(info.schema.name).\(key)'") else { return }
            guard info.propertyIndex[key] != nil else {
                return transaction.fail(Realm.Error(.invalidValue, "Invalid property name '\(key)' for class '\(info.schema.name)'."))
            }
        } else {
            _ = info.index(forKey: key)
        }
        for object in objects { (object as! ObjectBase).kvcSet(value, forKey: key) }
    }
}
