import Foundation

/// A JSON value of an App Services export, with its objects' keys in a stable (sorted) order.
package indirect enum ExportJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double, isInteger: Bool)
    case string(String)
    case array([ExportJSON])
    case object([(key: String, value: ExportJSON)])

    package static func == (a: ExportJSON, b: ExportJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x, let i), .number(let y, let j)): x == y && i == j
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let d, _): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let items): hasher.combine(items)
        case .object(let entries): for (k, v) in entries { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// Parses JSON text; nil when it is not JSON.
    package init?(parsing data: Data) {
        guard let value = try? JSONDecoder().decode(ExportJSON.self, from: data) else { return nil }
        self = value
    }

    package subscript(key: String) -> ExportJSON? {
        guard case .object(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    package var string: String? { if case .string(let s) = self { s } else { nil } }
    package var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    package var number: Double? { if case .number(let d, _) = self { d } else { nil } }
    package var array: [ExportJSON]? { if case .array(let a) = self { a } else { nil } }
    package var entries: [(key: String, value: ExportJSON)]? { if case .object(let e) = self { e } else { nil } }
}

extension ExportJSON: Decodable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            self = .number(Double(int), isInteger: true)
        } else if let double = try? container.decode(Double.self) {
            self = .number(double, isInteger: false)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([ExportJSON].self) {
            self = .array(array)
        } else {
            let object = try container.decode([String: ExportJSON].self)
            self = .object(object.keys.sorted().map { ($0, object[$0]!) })
        }
    }
}
