import Foundation

/// An error of the app services: logging in, tokens, users, API keys.
///
/// ```swift
/// do { try await app.login(credentials: .emailPassword(email: e, password: p)) }
/// catch let error as AppError where error.code == .invalidPassword { … }
/// ```
public struct AppError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Realm's app error codes (`RLMAppError`): the same names and raw values.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case unknown = -1
        /// The server could not be reached, answered with an error status that has no more
        /// specific code (`httpStatusCode` holds it), or answered something that is not the protocol.
        case httpRequestFailed = 1
        /// The user's session is not valid: a refused or missing token, or a user logged out or
        /// removed on this device. Logging in again may fix it.
        case invalidSession = 2
        case badRequest = 3
        case userNotFound = 4
        case userAppDomainMismatch = 5
        case domainNotAllowed = 6
        case readSizeLimitExceeded = 7
        case invalidParameter = 8
        case missingParameter = 9
        case functionExecutionError = 10
        case internalServerError = 11
        /// The auth provider does not exist or is disabled on the server.
        case authProviderNotFound = 12
        case valueNotFound = 13
        case valueAlreadyExists = 14
        case valueDuplicateName = 15
        case functionNotFound = 16
        case functionSyntaxError = 17
        case functionInvalid = 18
        case apiKeyAlreadyExists = 19
        case executionTimeLimitExceeded = 20
        case notCallable = 21
        case userAlreadyConfirmed = 22
        case userDisabled = 23
        case authError = 24
        case accountNameInUse = 25
        /// The email or password (or API key, or token) was not accepted.
        case invalidPassword = 26
        case maintenanceInProgress = 27
        case mongoDBError = 28
    }

    public let code: Code
    public let message: String
    /// The HTTP status of the server's answer, if there was one.
    public let httpStatusCode: Int?
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, httpStatusCode: Int? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.httpStatusCode = httpStatusCode
        self.underlying = underlying
    }

    public var description: String { "App error \(code) (\(code.rawValue)): \(message)" }

    public static func == (a: AppError, b: AppError) -> Bool {
        a.code == b.code && a.message == b.message && a.httpStatusCode == b.httpStatusCode
    }

    /// The code for a server `error_code` (docs/protocol.md §1); an unknown one counts as a
    /// failed request.
    static func code(forServerCode serverCode: String) -> Code {
        switch serverCode {
        case "InvalidCredentials", "InvalidPassword": .invalidPassword
        case "InvalidToken": .invalidSession
        case "UserDisabled": .userDisabled
        case "UserNotFound": .userNotFound
        case "AccountNameInUse": .accountNameInUse
        case "BadRequest", "AppNotFound": .badRequest
        case "AuthProviderDisabled", "AuthProviderNotFound": .authProviderNotFound
        case "APIKeyNotFound", "NotFound": .valueNotFound
        case "APIKeyAlreadyExists": .apiKeyAlreadyExists
        case "UserAlreadyConfirmed": .userAlreadyConfirmed
        case "AuthError": .authError
        case "Unknown": .unknown
        case "InternalError": .internalServerError
        case "MaintenanceInProgress": .maintenanceInProgress
        case "FunctionNotFound": .functionNotFound
        case "FunctionExecutionError": .functionExecutionError
        case "ExecutionTimeLimitExceeded": .executionTimeLimitExceeded
        case "NotCallable": .notCallable
        case "FunctionInvalid": .functionInvalid
        case "MongoDBError": .mongoDBError
        // The admin API's (`atoll apps import`); an app never sees them.
        case "InvalidAppConfiguration": .invalidParameter
        case "AppExists", "AppReadOnly": .valueAlreadyExists
        default: .httpRequestFailed
        }
    }

    /// An error of this device, not the server's: the user is logged out or removed here.
    static func loggedOut(_ message: String) -> AppError { AppError(.invalidSession, message) }

    /// Whether the server refused the token (not: the user is logged out on this device).
    var isRefusedByServer: Bool { httpStatusCode != nil }
}

/// `error.localizedDescription` is the message (through `any Error` too, which goes through
/// `NSError`), under realm-swift's app error domain.
extension AppError: CustomNSError, LocalizedError {
    public static var errorDomain: String { "io.realm.app" }
    public var errorCode: Int { code.rawValue }
    /// The message under `NSLocalizedDescriptionKey`: Linux's Foundation reads the description of
    /// a bridged `CustomNSError` from there, not from `errorDescription`.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return info
    }
    public var errorDescription: String? { message }
}

extension AppError.Code {
    /// Lets a code stand for every `AppError` with it in a `catch` clause or a `switch`:
    ///
    /// ```swift
    /// do { try await app.login(credentials: credentials) } catch AppError.invalidPassword { … }
    /// ```
    public static func ~= (code: AppError.Code, error: any Swift.Error) -> Bool {
        (error as? AppError)?.code == code
    }
}

// The codes as members of `AppError`, as realm-swift spells them in a `catch`.
extension AppError {
    public static var unknown: Code { .unknown }
    public static var httpRequestFailed: Code { .httpRequestFailed }
    public static var invalidSession: Code { .invalidSession }
    public static var badRequest: Code { .badRequest }
    public static var userNotFound: Code { .userNotFound }
    public static var userAppDomainMismatch: Code { .userAppDomainMismatch }
    public static var domainNotAllowed: Code { .domainNotAllowed }
    public static var readSizeLimitExceeded: Code { .readSizeLimitExceeded }
    public static var invalidParameter: Code { .invalidParameter }
    public static var missingParameter: Code { .missingParameter }
    public static var functionExecutionError: Code { .functionExecutionError }
    public static var internalServerError: Code { .internalServerError }
    public static var authProviderNotFound: Code { .authProviderNotFound }
    public static var valueNotFound: Code { .valueNotFound }
    public static var valueAlreadyExists: Code { .valueAlreadyExists }
    public static var valueDuplicateName: Code { .valueDuplicateName }
    public static var functionNotFound: Code { .functionNotFound }
    public static var functionSyntaxError: Code { .functionSyntaxError }
    public static var functionInvalid: Code { .functionInvalid }
    public static var apiKeyAlreadyExists: Code { .apiKeyAlreadyExists }
    public static var executionTimeLimitExceeded: Code { .executionTimeLimitExceeded }
    public static var notCallable: Code { .notCallable }
    public static var userAlreadyConfirmed: Code { .userAlreadyConfirmed }
    public static var userDisabled: Code { .userDisabled }
    public static var authError: Code { .authError }
    public static var accountNameInUse: Code { .accountNameInUse }
    public static var invalidPassword: Code { .invalidPassword }
    public static var maintenanceInProgress: Code { .maintenanceInProgress }
    public static var mongoDBError: Code { .mongoDBError }
}
