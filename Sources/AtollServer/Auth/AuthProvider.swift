/// The ways a user logs in, named as in the HTTP API's paths
/// (`/api/client/v1/app/{app}/auth/providers/{provider}/login`).
package enum AuthProvider: String, Sendable, Hashable, CaseIterable {
    /// A new user with no credentials each time.
    case anonymous = "anon-user"
    /// Email and password, registered first.
    case emailPassword = "local-userpass"
    /// A user API key created by a logged-in user, or a server API key made with the admin API.
    case apiKey = "api-key"
    /// A JWT signed by the app's own identity service.
    case customToken = "custom-token"
    /// Sign in with Apple: an OpenID Connect ID token checked against the provider's keys.
    case apple = "oauth2-apple"
    /// Google Sign-In: an OpenID Connect ID token checked against the provider's keys, or a server
    /// auth code exchanged at Google's token endpoint for one.
    case google = "oauth2-google"
    /// Facebook Login: a user access token checked with Facebook's Graph API.
    case facebook = "oauth2-facebook"
    /// The app's authentication function: a webhook that turns a payload into the user's external id.
    case customFunction = "custom-function"
}
