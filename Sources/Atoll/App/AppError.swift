import Foundation

/// An error of the app services: logging in, tokens, users, API keys.
///
/// ```swift
/// do { try await app.login(credentials: .emailPassword(email: e, password: p)) }
/// catch let error as AppError where error.code == .invalidPassword { … }
/// ```
public struct AppError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: Int, Sendable, Hashable {
        case unknown = -1
        /// The email or password (or API key, or token) was not accepted.
        case invalidPassword = 0
        case invalidSession = 2
        case userDisabled = 3
        case userNotFound = 4
        case accountNameInUse = 5
        case badRequest = 6
        case authProviderDisabled = 7
        case appNotFound = 8
        case serverError = 9
        /// The server could not be reached, or answered something that is not the protocol.
        case httpRequestFailed = 10
        /// The user is logged out or removed on this device.
        case userLoggedOut = 11
        case invalidParameter = 12
        /// An auth failure with no more specific code: logging in before the e-mail is confirmed
        /// ("confirmation required"), a confirmation or reset function that said no.
        case authError = 13
        /// The user to confirm is confirmed already.
        case userAlreadyConfirmed = 14
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

    /// The code for a server `error_code`.
    static func code(forServerCode serverCode: String) -> Code {
        switch serverCode {
        case "InvalidCredentials", "InvalidPassword": .invalidPassword
        case "InvalidToken": .invalidSession
        case "UserDisabled": .userDisabled
        case "UserNotFound": .userNotFound
        case "AccountNameInUse": .accountNameInUse
        case "BadRequest": .badRequest
        case "AuthProviderDisabled": .authProviderDisabled
        case "AppNotFound": .appNotFound
        case "InternalError": .serverError
        case "AuthError": .authError
        case "UserAlreadyConfirmed": .userAlreadyConfirmed
        default: .unknown
        }
    }
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
