import AtollCore

/// Names of the SQLite tables and columns that hold a schema's objects.
///
/// - One table per object type, `class_<Type>`, with the row number in `_row` and one column per
///   single-valued property named after it. A link or embedded object column holds the target's `_row`.
/// - `List<T>`: `list_<Type>_<property>(owner, pos, value)`, positions 0…n-1.
/// - `MutableSet<T>`: `set_<Type>_<property>(owner, value)`.
/// - `Map<String, T>`: `map_<Type>_<property>(owner, key, value)`.
/// - Internal tables start with `_atoll_`.
package enum StorageLayout {
    package static let rowColumn = "_row"
    package static let decimalCollation = QueryFunctions.decimalCollation

    package static func table(_ objectType: String) -> String { "class_" + objectType }

    package static func collectionTable(_ objectType: String, _ property: Property) -> String {
        switch property.collection {
        case .single: preconditionFailure("'\(property.name)' is not a collection")
        case .list: "list_\(objectType)_\(property.name)"
        case .set: "set_\(objectType)_\(property.name)"
        case .map: "map_\(objectType)_\(property.name)"
        }
    }

    /// `name` quoted as an SQL identifier.
    package static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
