import AtollCore
import Foundation
import JWTKit

/// The outcome of ``AuthService/syncUser(accessToken:appID:session:)``.
enum SyncUserCheck: Sendable {
    /// The user, with the device its token was issued to, when the token expires and the custom
    /// user data it carries (what permission rules read as `%user.custom_data`).
    case user(StoredUser, deviceID: String?, expiresAt: Date, customData: [String: JSONValue]?)
    /// The error to answer the session with.
    case refused(ErrorMessage)
}

extension AuthService {
    /// The user a sync `bind` (or `refreshAccessToken`) acts for, or the error to answer with
    /// (docs/protocol.md §2.6 and §2.7).
    ///
    /// - An expired token is ``ServerErrorCode/accessTokenExpired`` and a forged or unreadable one
    ///   ``ServerErrorCode/invalidAccessToken``, both with the action "refresh token".
    /// - A token of another app is ``ServerErrorCode/invalidAccessToken`` with the action "protocol
    ///   violation": refreshing would only give another token of that app.
    /// - A removed or disabled user is ``ServerErrorCode/userLoggedOut`` (action "log out"), and so
    ///   is a token whose login (device) logged out or was revoked, or that names none.
    func syncUser(accessToken token: String, appID: String, session: SessionID) async -> SyncUserCheck {
        func refusal(_ code: ServerErrorCode, _ message: String, action: ErrorAction? = nil) -> SyncUserCheck {
            .refused(ErrorMessage(code: code, message: message, action: action, session: session))
        }
        // Signature and type first; expiry by the service's clock, the one sessions expire by.
        guard let claims = try? await accessTokens.keys.verify(token, as: AccessTokenClaims.self) else {
            return refusal(.invalidAccessToken, "the access token is invalid")
        }
        guard claims.exp.value > now() else { return refusal(.accessTokenExpired, "the access token expired") }
        guard claims.app == appID else {
            return refusal(
                .invalidAccessToken, "the access token belongs to app \"\(claims.app)\", not \"\(appID)\"",
                action: .protocolViolation)
        }
        let user: StoredUser?
        do {
            user = try await store.user(id: claims.sub.value)
        } catch {
            return refusal(.tryAgainLater, "the server could not read the user", action: .retryLater)
        }
        guard let user, user.appID == appID else { return refusal(.userLoggedOut, "the user no longer exists") }
        guard !user.disabled else { return refusal(.userLoggedOut, "the user is disabled") }
        guard let deviceID = claims.dev else { return refusal(.userLoggedOut, "the access token names no login; log in again") }
        do {
            guard try await isLive(deviceID: deviceID, userID: user.id) else {
                return refusal(.userLoggedOut, "the access token's login was revoked (logged out); log in again")
            }
        } catch {
            return refusal(.tryAgainLater, "the server could not read the login", action: .retryLater)
        }
        return .user(user, deviceID: deviceID, expiresAt: claims.exp.value, customData: claims.user_data)
    }

    /// The error that must end a session whose token was checked at its bind, when since then its
    /// user was removed or disabled or its login logged out; nil when it may go on. Asked once the
    /// session is registered where ``SyncCoordinator/endSessions(userID:deviceID:reason:)`` finds
    /// it, so a logout in between is seen either here or there.
    func revocation(userID: String, deviceID: String?, appID: String, session: SessionID) async -> ErrorMessage? {
        func refusal(_ code: ServerErrorCode, _ message: String, action: ErrorAction? = nil) -> ErrorMessage {
            ErrorMessage(code: code, message: message, action: action, session: session)
        }
        do {
            guard let user = try await store.user(id: userID), user.appID == appID else {
                return refusal(.userLoggedOut, "the user no longer exists")
            }
            guard !user.disabled else { return refusal(.userLoggedOut, "the user is disabled") }
            if let deviceID, try await !isLive(deviceID: deviceID, userID: userID) {
                return refusal(.userLoggedOut, "the access token's login was revoked (logged out); log in again")
            }
            return nil
        } catch {
            return refusal(.tryAgainLater, "the server could not read the user", action: .retryLater)
        }
    }
}
