/// One object read from a table: its key and its column values.
public struct RealmObject: Sendable, Equatable {
    /// The object key, unique within its table.
    public let key: Int64
    /// Column names, parallel to `values`.
    public let columnNames: [String]
    /// Column values in the table's column order.
    public let values: [RealmValue]
    /// Number of links from other objects to this one, over all backlink columns.
    public let backlinkCount: Int

    /// The value of the column called `name`, or nil when the table has no such column.
    public subscript(name: String) -> RealmValue? {
        columnNames.firstIndex(of: name).map { values[$0] }
    }
}
