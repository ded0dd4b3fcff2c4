@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// `Credentials.facebook(accessToken:)` and `Credentials.google(serverAuthCode:)` through a real
/// `App`, against a server whose Facebook and Google are a loopback stand-in.
extension SerialAppServicesTests {
@MainActor @Suite(.serialized) struct OAuthCredentialsTests {
    @Test func facebookAndGoogleAuthCodeLoginsAndLinks() async throws {
        let fake = try await FakeIdentityProviders.start()
        let server = try await SyncTestServer.start {
            var app = ServerConfiguration.App(id: "test-app", google: fake.googleSettings)
            app.facebook = fake.facebook
            $0.apps = [app]
        }
        do {
            fake.addFacebookToken("EAAB-rosie", user: .init(id: "10001", name: "Rosie Cotton", email: "rosie@shire.me",
                                                            pictureURL: "https://cdn.example.com/rosie.jpg"))
            let app = server.app()
            let user = try await app.login(credentials: .facebook(accessToken: "EAAB-rosie"))
            #expect(user.identities.map { "\($0.providerType)/\($0.identifier)" } == ["oauth2-facebook/10001"])
            #expect(user.profile.name == "Rosie Cotton")
            #expect(user.profile.email == "rosie@shire.me")
            #expect(user.profile.pictureURL == "https://cdn.example.com/rosie.jpg")
            let same = try await server.app(device: "tablet").login(credentials: .facebook(accessToken: "EAAB-rosie"))
            #expect(same.id == user.id, "the same Facebook account is the same user")

            // A Google server auth code, linked to the Facebook user, then logging in on its own.
            fake.addGoogleCode("4/0Ab-link", idToken: try await fake.google.idToken(subject: "555", email: "rosie@gmail.com"))
            let linked = try await user.linkUser(credentials: .google(serverAuthCode: "4/0Ab-link"))
            #expect(linked.identities.map { "\($0.providerType)/\($0.identifier)" } == ["oauth2-facebook/10001", "oauth2-google/555"])
            fake.addGoogleCode("4/0Ab-login", idToken: try await fake.google.idToken(subject: "555"))
            let viaGoogle = try await server.app(device: "pixel").login(credentials: .google(serverAuthCode: "4/0Ab-login"))
            #expect(viaGoogle.id == user.id)

            // A new Google account is a new user.
            fake.addGoogleCode("4/0Ab-other", idToken: try await fake.google.idToken(subject: "777"))
            let other = try await app.login(credentials: .google(serverAuthCode: "4/0Ab-other"))
            #expect(other.id != user.id)
            #expect(other.identities.map(\.providerType) == ["oauth2-google"])

            // Refused tokens and codes are AppErrors, as for an ID token; a provider down is an auth error.
            fake.addFacebookToken("EAAB-elsewhere", user: .init(id: "10002", appID: "99999"))
            await #expect { try await app.login(credentials: .facebook(accessToken: "EAAB-elsewhere")) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
            await #expect { try await app.login(credentials: .google(serverAuthCode: "4/0Ab-login")) }
                throws: { ($0 as? AppError)?.code == .invalidPassword }
            fake.setBehavior(.httpStatus(500), for: .debugToken)
            await #expect { try await app.login(credentials: .facebook(accessToken: "EAAB-rosie")) }
                throws: { ($0 as? AppError)?.code == .authError }
        } catch {
            try? await server.tearDown()
            try? await fake.stop()
            throw error
        }
        try await server.tearDown()
        try await fake.stop()
    }
}
}
