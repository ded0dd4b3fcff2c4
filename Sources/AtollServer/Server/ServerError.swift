import Foundation
import Hummingbird

/// An error the HTTP API answers with: a status and `{"error": message, "error_code": code}`
/// (docs/protocol.md §1).
///
/// ```swift
/// throw ServerError(.invalidCredentials, "unauthorized")
/// ```
package struct ServerError: Error, Sendable, CustomStringConvertible {
    /// The `error_code` values of the HTTP API.
    package enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidCredentials = "InvalidCredentials"
        case invalidToken = "InvalidToken"
        case userDisabled = "UserDisabled"
        case userNotFound = "UserNotFound"
        case appNotFound = "AppNotFound"
        case apiKeyNotFound = "APIKeyNotFound"
        case accountNameInUse = "AccountNameInUse"
        case invalidPassword = "InvalidPassword"
        case badRequest = "BadRequest"
        case authProviderDisabled = "AuthProviderDisabled"
        case notFound = "NotFound"
        case internalError = "InternalError"
        /// A limit of the server's (logins, new apps, connections): try again after `retryAfter`.
        case tooManyRequests = "TooManyRequests"
        /// An auth failure with no more specific code: an unconfirmed user's login ("confirmation
        /// required"), a confirmation or reset function that refused.
        case authError = "AuthError"
        /// The user of a confirmation request is confirmed already.
        case userAlreadyConfirmed = "UserAlreadyConfirmed"
        /// A failure App Services reports with no specific code (realm-swift's `AppError.unknown`):
        /// a custom confirmation that cannot run, a reset function that failed.
        case unknown = "Unknown"
        /// A function name the app does not have.
        case functionNotFound = "FunctionNotFound"
        /// A function that failed: its own error message, or why its webhook gave no result.
        case functionExecutionError = "FunctionExecutionError"
        /// A function whose webhook did not answer in time.
        case executionTimeLimitExceeded = "ExecutionTimeLimitExceeded"
        /// A private function, or one whose `canEvaluate` does not hold for the user.
        case notCallable = "NotCallable"
        /// A function imported from App Services with no webhook yet.
        case functionInvalid = "FunctionInvalid"
        /// An app configuration the admin API cannot take (the message names the field at fault).
        case invalidAppConfiguration = "InvalidAppConfiguration"
        /// The app exists with another configuration: replacing it needs `replace=true`.
        case appExists = "AppExists"
        /// The app is declared in the server's configuration file: the admin API may not change it.
        case appReadOnly = "AppReadOnly"

        /// The HTTP status that goes with the code.
        package var status: HTTPResponse.Status {
            switch self {
            case .invalidCredentials, .invalidToken, .authError: .unauthorized
            case .userDisabled, .authProviderDisabled: .forbidden
            case .userNotFound, .appNotFound, .apiKeyNotFound, .notFound: .notFound
            case .accountNameInUse, .userAlreadyConfirmed, .appExists, .appReadOnly: .conflict
            case .invalidPassword, .badRequest, .unknown, .functionExecutionError, .executionTimeLimitExceeded, .functionInvalid,
                 .invalidAppConfiguration: .badRequest
            case .functionNotFound: .notFound
            case .notCallable: .forbidden
            case .internalError: .internalServerError
            case .tooManyRequests: .tooManyRequests
            }
        }
    }

    package let code: Code
    /// A readable message; it never carries a password, token or key.
    package let message: String
    /// Seconds after which a refused request may be tried again (the `Retry-After` header).
    package var retryAfter: Int?

    package init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    package var description: String { "\(code.rawValue): \(message)" }
}

extension ServerError: HTTPResponseError {
    package var status: HTTPResponse.Status { code.status }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONBody.response(Body(error: message, errorCode: code.rawValue), status: status)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    /// The JSON shape of every error answer.
    package struct Body: Codable, Sendable, Equatable {
        package var error: String
        package var errorCode: String

        package init(error: String, errorCode: String) {
            self.error = error
            self.errorCode = errorCode
        }

        enum CodingKeys: String, CodingKey {
            case error
            case errorCode = "error_code"
        }
    }
}
