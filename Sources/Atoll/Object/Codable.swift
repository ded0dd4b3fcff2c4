import AtollCore
import Foundation

// Codable as in realm-swift: `@Persisted`, `List`, `MutableSet` and `Map` are Codable when their
// values are, so a model that declares `Codable` gets the synthesized `init(from:)` and
// `encode(to:)`:
//
//     class Person: Object, Codable {
//         @Persisted(primaryKey: true) var _id: ObjectId
//         @Persisted var name: String
//         @Persisted var dogs: List<Dog>
//     }
//     let person = try JSONDecoder().decode(Person.self, from: json)
//     try realm.write { realm.add(person) }
//
// Beyond realm-swift, managed objects encode too (Realm throws for them): the accessors of a
// `Codable` class keep their fields bound to the object (see `Persisted.Storage.managedIn`).

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (through a single-value container, so the decoder's date and
    /// data strategies apply).
    public init(from decoder: any Decoder) throws {
        storage = .unmanaged(try decoder.singleValueContainer().decode(Value.self))
        options = []
    }
}

extension Persisted: Encodable where Value: Encodable {
    /// Encodes the property's value, read from the realm when the object is managed.
    ///
    /// Throws `EncodingError.invalidValue` for a deleted object, or for a managed object whose class
    /// was not `Encodable` when it was read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .unmanaged(let value):
            try container.encode(value)
        case .unmanagedDefault:
            try container.encode(Value._atollDefault())
        case .managedIn(let field):
            guard let state = field.owner.takeUnretainedValue()._managedState, !state.isInvalidated else {
                throw EncodingError.invalidValue(Value.self, EncodingError.Context(
                    codingPath: encoder.codingPath, debugDescription: "The object has been deleted or invalidated"))
            }
            try container.encode(Value._atollGet(state, field.index))
        case .managed:
            throw EncodingError.invalidValue(Value.self, EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "This managed object's fields cannot be read without the object; declare Codable on its class"))
        }
    }
}

/// A property wrapper whose value may be nil; a missing key then decodes as nil instead of
/// failing (realm-swift's name, for `@Persisted` optionals).
public protocol OptionalCodingWrapper {
    associatedtype WrappedType: ExpressibleByNilLiteral
    init(wrappedValue: WrappedType)
}

extension Persisted: OptionalCodingWrapper where Value: ExpressibleByNilLiteral {}

extension KeyedDecodingContainer {
    /// An optional `@Persisted` property whose key is missing decodes as nil (the synthesized
    /// `init(from:)` picks this over the general `decode`).
    public func decode<T>(_ type: T.Type, forKey key: KeyedDecodingContainer<K>.Key) throws -> T
    where T: Decodable, T: OptionalCodingWrapper {
        try decodeIfPresent(T.self, forKey: key) ?? T(wrappedValue: nil)
    }
}

extension _PersistedElementCollection where Element: Decodable {
    /// Decodes an unmanaged list or set from an array (a set keeps duplicates once).
    public init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { _appendUnmanaged(try container.decode(Element.self)) }
    }
}

extension _PersistedElementCollection where Element: Encodable {
    /// Encodes the elements as an array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in _elements { try container.encode(element) }
    }
}

extension List: Decodable where Element: Decodable {}
extension List: Encodable where Element: Encodable {}
extension MutableSet: Decodable where Element: Decodable {}
extension MutableSet: Encodable where Element: Encodable {}

extension Map: Decodable where Value: Decodable {
    /// Decodes an unmanaged map from a dictionary with string keys.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let entries = try decoder.singleValueContainer().decode([String: Value].self)
        backing = .unmanaged(entries)
    }
}

extension Map: Encodable where Value: Encodable {
    /// Encodes the entries as a dictionary with string keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
    }
}

extension Results: Encodable where Element: Encodable {
    /// Encodes the objects as an array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for object in self { try container.encode(object) }
    }
}
