import AtollCore

/// The rule translator (shared with the server's remote data access) reads export JSON.
typealias MongoExpression = AtollCore.MongoExpression<ExportJSON>

extension ExportJSON: MongoJSON {
    package var mongo: MongoJSONKind<ExportJSON> {
        switch self {
        case .null: .null
        case .bool(let b): .bool(b)
        case .number(let d, let isInteger): .number(d, isInteger: isInteger)
        case .string(let s): .string(s)
        case .array(let items): .array(items)
        case .object(let entries): .object(entries)
        }
    }

    /// Rules write their literals into the query text.
    package var literalValue: Value? { nil }
}
