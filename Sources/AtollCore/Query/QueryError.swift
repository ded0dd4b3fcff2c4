import Foundation

/// A query that could not be parsed or bound, with what is wrong and where.
///
/// ```swift
/// do { _ = try QueryExpression.parse("name == ") }
/// catch { print(error) }   // expected a value after '==' at line 1, column 9
/// ```
/// `message` says what is wrong; `description` adds the position when it is known.
package struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// The text is not a well-formed query.
        case syntaxError
        /// The query names an object type the schema does not have.
        case unknownType
        /// A key path names a property the object type does not have.
        case unknownProperty
        /// Two operands, or an operand and an operator, have types that do not go together.
        case typeMismatch
        /// An operator or collection operator applied to something it does not work on
        /// (`@count` of a string, `<` on a bool, `ANY` without a collection, …).
        case invalidOperation
        /// A missing, surplus or wrongly typed argument (`%@`, `%d`, `%f`, `%K`, `$0`).
        case badArgument
        /// Valid syntax that Atoll does not support (`@type`, …).
        case unsupported
        /// A geospatial shape that is not valid: coordinates out of range, a negative radius, a polygon
        /// ring that is not closed or has too few points (the message says which).
        case invalidGeometry
        /// The query goes past one of Atoll's limits: ``QueryExpression/maximumNestingDepth`` or
        /// ``QueryExpression/maximumKeyPathLength``.
        case tooComplex
    }

    package let code: Code
    package let message: String
    package let range: SourceRange

    package init(_ code: Code, _ message: String, at range: SourceRange = .none) {
        self.code = code
        self.message = message
        self.range = range
    }

    package var description: String {
        range.isKnown ? message + " at " + range.description : message
    }
}

/// `error.localizedDescription` is the message with where it is in the query.
extension QueryError: LocalizedError {
    package var errorDescription: String? { description }
}
