import Foundation

extension AppConfig.OpenIDProvider {
    /// Google server auth codes (`Credentials.google(serverAuthCode:)`, App Services'
    /// `oauth2-google` without OpenID): the server exchanges the code at ``tokenURL`` with the
    /// client id and secret, and checks the ID token it gets back as any Google ID token, with
    /// ``clientId`` as its audience.
    ///
    /// ```json
    /// "authCode": { "clientId": "1234.apps.googleusercontent.com", "clientSecret": "…" }
    /// ```
    public struct AuthCode: Sendable, Hashable, Codable {
        /// The OAuth client id the app's codes are made for (the server client id of Google Sign-In).
        public var clientId: String
        /// The client's secret: a secret the operator supplies (never in an export, never answered
        /// by the admin API). Nil (an imported app waiting for it) refuses auth codes.
        public var clientSecret: String?
        /// Google's token endpoint (https, or http on a loopback address).
        public var tokenURL: String
        /// The `redirect_uri` sent with the code. Nil sends none, as codes from Google Sign-In on
        /// iOS and Android need; a web app's codes need the one they were made with (`postmessage`…).
        public var redirectURI: String?

        public static let defaultTokenURL = "https://oauth2.googleapis.com/token"

        public init(clientId: String, clientSecret: String? = nil, tokenURL: String = AuthCode.defaultTokenURL, redirectURI: String? = nil) {
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.tokenURL = tokenURL
            self.redirectURI = redirectURI
        }

        enum CodingKeys: String, CodingKey { case clientId, clientSecret, tokenURL, redirectURI }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(clientId: try container.decode(String.self, forKey: .clientId),
                      clientSecret: try container.decodeIfPresent(String.self, forKey: .clientSecret),
                      tokenURL: try container.decodeIfPresent(String.self, forKey: .tokenURL) ?? Self.defaultTokenURL,
                      redirectURI: try container.decodeIfPresent(String.self, forKey: .redirectURI))
        }
    }
}

extension AppConfig {
    /// Facebook Login (`oauth2-facebook`, `Credentials.facebook(accessToken:)`): the server asks
    /// Facebook's Graph API whether a user access token was made for this Facebook app
    /// (`debug_token` with the app id and secret), then reads the user's id, name, e-mail and
    /// picture (`/me`). The Facebook user id is the identity.
    ///
    /// ```json
    /// "facebook": { "clientId": "1234567890", "clientSecret": "…" }
    /// ```
    public struct Facebook: Sendable, Hashable, Codable {
        /// The Facebook app id (App Services' `clientId`).
        public var clientId: String
        /// The Facebook app secret: a secret the operator supplies (never in an export, never
        /// answered by the admin API). Nil (an imported app waiting for it) refuses Facebook logins.
        public var clientSecret: String?
        /// The Graph API's base (https, or http on a loopback address); a version may follow
        /// (`https://graph.facebook.com/v21.0`).
        public var graphURL: String
        /// How long one Graph API call may take, in seconds.
        public var timeout: TimeInterval

        public static let defaultGraphURL = "https://graph.facebook.com"

        public init(clientId: String, clientSecret: String? = nil, graphURL: String = Facebook.defaultGraphURL, timeout: TimeInterval = 10) {
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.graphURL = graphURL
            self.timeout = timeout
        }

        enum CodingKeys: String, CodingKey { case clientId, clientSecret, graphURL, timeout }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(clientId: try container.decode(String.self, forKey: .clientId),
                      clientSecret: try container.decodeIfPresent(String.self, forKey: .clientSecret),
                      graphURL: try container.decodeIfPresent(String.self, forKey: .graphURL) ?? Self.defaultGraphURL,
                      timeout: try container.decodeIfPresent(TimeInterval.self, forKey: .timeout) ?? 10)
        }
    }
}
