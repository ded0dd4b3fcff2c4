import AtollCore
import Foundation

extension Results: KeyValueCodingCollection where Element: ObjectBase {
    var kvcElements: [Any] { map { $0 as Any } }
    func kvcSetEach(_ value: Any?, forKey key: String) { setValue(value, forKey: key) }

    /// The value of `key` for each object, in order, as an array (`NSNull` for nil); `"self"`
    /// gives the objects.
    ///
    /// ```swift
    /// let names = realm.objects(Person.self).value(forKey: "name") as! [String]
    /// ```
    /// An unknown name stops the program, as Realm raises for it.
    public func value(forKey key: String) -> Any? {
        KeyValueCoding.bulkValues(kvcElements, key: key, of: Element.self)
    }

    /// The value of a key path for each object (`"owner.name"`), or an aggregate of them:
    /// `"@count"`, `"@sum.age"`, `"@avg.age"`, `"@min.age"`, `"@max.age"`.
    public func value(forKeyPath keyPath: String) -> Any? {
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if path.count == 1 && !keyPath.hasPrefix("@") { return value(forKey: keyPath) }
        return KeyValueCoding.value(of: kvcElements, path: path)
    }

    /// Sets `key` to `value` on every object of the results, inside a write transaction.
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.objects(Person.self).where { $0.city == "Montreal" }.setValue("Toronto", forKey: "city")
    /// }
    /// ```
    /// Every object that matched when the call began is set, even one the change takes out of the
    /// results. An unknown name or a value of the wrong type fails the write transaction:
    /// `realm.write` throws a `Realm.Error` with code `.invalidValue` and nothing is written.
    public func setValue(_ value: Any?, forKey key: String) {
        KeyValueCoding.bulkSet(Array(self), value, forKey: key, realm: realm)
    }
}
