import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

// An app's account screens in Realm's style: sign-up with e-mail confirmation, "forgot password"
// by mail or by a security question (the reset function), and a settings screen that reads the
// user's custom data.
class AcctSettings: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var ownerId = ""
    @Persisted var theme = "light"
    @Persisted var displayName = ""
}

final class AccountController {
    let app: App

    init(app: App) {
        self.app = app
    }

    func signUp(email: String, password: String, completion: @escaping (Error?) -> Void) {
        app.emailPasswordAuth.registerUser(email: email, password: password) { error in
            completion(error)
        }
    }

    // The link in the confirmation mail carries token and tokenId.
    func confirm(token: String, tokenId: String, completion: @escaping (Error?) -> Void) {
        app.emailPasswordAuth.confirmUser(token, tokenId: tokenId) { error in
            completion(error)
        }
    }

    func resendConfirmation(to email: String, completion: @escaping (Error?) -> Void) {
        app.emailPasswordAuth.resendConfirmationEmail(email, completion: completion)
    }

    func retryConfirmation(for email: String) async throws {
        try await app.emailPasswordAuth.retryCustomConfirmation(email)
    }

    func forgotPassword(email: String, completion: @escaping (Error?) -> Void) {
        app.emailPasswordAuth.sendResetPasswordEmail(email, completion: completion)
    }

    func completeReset(newPassword: String, token: String, tokenId: String) async throws {
        try await app.emailPasswordAuth.resetPassword(to: newPassword, token: token, tokenId: tokenId)
    }

    func resetWithSecurityAnswer(email: String, newPassword: String, answer: String, completion: @escaping (Error?) -> Void) {
        let args: [AnyBSON] = [AnyBSON(answer), ["asked": .datetime(Date()), "attempt": 1]]
        app.emailPasswordAuth.callResetPasswordFunction(email: email, password: newPassword, args: args) { error in
            completion(error)
        }
    }

    func logIn(email: String, password: String) async throws -> User {
        try await app.login(credentials: Credentials.emailPassword(email: email, password: password))
    }

    func theme(of user: User) -> String {
        guard let theme = user.customData["theme"], case let .string(value)? = theme else { return "light" }
        return value
    }

    func reloadSettings(of user: User, completion: @escaping (String?) -> Void) {
        user.refreshCustomData { result in
            switch result {
            case .failure(let error):
                print("Failed to refresh custom data: \(error.localizedDescription)")
                completion(nil)
            case .success(let customData):
                completion(customData["displayName"] as? String)
            }
        }
    }

    static func message(for error: Error) -> String {
        guard let appError = error as? AppError else { return error.localizedDescription }
        switch appError.code {
        case .accountNameInUse: return "That e-mail is already registered."
        case .invalidPassword: return "Wrong e-mail or password."
        case .authError: return "Please confirm your e-mail first."
        case .userAlreadyConfirmed: return "Your e-mail is confirmed; log in."
        case .userNotFound: return "No account with that e-mail."
        default: return appError.localizedDescription
        }
    }
}

private func wait(_ start: (@escaping (Error?) -> Void) -> Void) async -> Error? {
    await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
}

// The test harness: a server whose app hands its tokens to a receiver standing in for the mailer.
private func withAccountsServer(confirmation: ServerConfiguration.EmailPassword.Confirmation, answering: WebhookReceiver.Behavior,
                                _ body: (SyncTestServer, WebhookReceiver) async throws -> Void) async throws {
    let mailer = try await WebhookReceiver.start(answering)
    let urls = (mailer.url("/mail"), mailer.url("/confirm"), mailer.url("/reset"))
    try await withSyncTestServer({ configuration in
        var app = ServerConfiguration.App(id: "test-app")
        app.emailPassword = .init(confirmation: confirmation, deliveryURL: urls.0, confirmationFunctionURL: urls.1, resetFunctionURL: urls.2,
                                  webhookTimeout: 60)
        app.customUserData = .init(type: "AcctSettings", userIdField: "ownerId")
        app.permissions = [.init(type: "AcctSettings", write: "ownerId == %user.id")]
        configuration.apps = [app]
    }) { server in
        try await body(server, mailer)
    }
    try await mailer.stop()
}

@MainActor @Suite struct AccountsApp {
    @Test func signUpConfirmForgotPasswordAndSettings() async throws {
        try await withAccountsServer(confirmation: .token, answering: .ok) { server, mailer in
            let controller = AccountController(app: server.app(device: "accounts"))
            #expect(await wait { controller.signUp(email: "pat@example.com", password: "first-pw", completion: $0) } == nil)
            do {
                _ = try await controller.logIn(email: "pat@example.com", password: "first-pw")
                Issue.record("an unconfirmed user logged in")
            } catch {
                #expect(AccountController.message(for: error) == "Please confirm your e-mail first.")
            }
            _ = await mailer.nextCall()
            #expect(await wait { controller.resendConfirmation(to: "pat@example.com", completion: $0) } == nil)
            let mail = try #require(await mailer.nextCall())
            #expect(await wait { controller.confirm(token: mail.token!, tokenId: mail.tokenId!, completion: $0) } == nil)
            let again = await wait { controller.resendConfirmation(to: "pat@example.com", completion: $0) }
            #expect(AccountController.message(for: try #require(again)) == "Your e-mail is confirmed; log in.")

            let user = try await controller.logIn(email: "pat@example.com", password: "first-pw")
            #expect(controller.theme(of: user) == "light")
            var configuration = user.flexibleSyncConfiguration()
            configuration.objectTypes = [AcctSettings.self]
            let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
            let subscriptions = realm.subscriptions
            try await subscriptions.update { subscriptions.append(QuerySubscription<AcctSettings>(name: "settings")) }
            try realm.write {
                realm.add(AcctSettings(value: ["ownerId": user.id, "theme": "dark", "displayName": "Pat"]))
            }
            try await realm.syncSession?.wait(for: .upload)
            let name: String? = await withCheckedContinuation { continuation in
                controller.reloadSettings(of: user) { continuation.resume(returning: $0) }
            }
            #expect(name == "Pat")
            #expect(controller.theme(of: user) == "dark")

            #expect(await wait { controller.forgotPassword(email: "pat@example.com", completion: $0) } == nil)
            let reset = try #require(await mailer.nextCall())
            #expect(reset.purpose == "reset")
            try await controller.completeReset(newPassword: "second-pw", token: reset.token!, tokenId: reset.tokenId!)
            _ = try await controller.logIn(email: "pat@example.com", password: "second-pw")
        }
    }

    @Test func customConfirmationAndTheResetFunction() async throws {
        try await withAccountsServer(confirmation: .function, answering: .status("pending")) { server, mailer in
            let controller = AccountController(app: server.app(device: "functions"))
            #expect(await wait { controller.signUp(email: "quin@example.com", password: "first-pw", completion: $0) } == nil)
            mailer.setBehavior(.status("success"))
            try await controller.retryConfirmation(for: "quin@example.com")
            _ = try await controller.logIn(email: "quin@example.com", password: "first-pw")

            #expect(await wait { controller.resetWithSecurityAnswer(email: "quin@example.com", newPassword: "second-pw", answer: "Rex", completion: $0) } == nil)
            _ = try await controller.logIn(email: "quin@example.com", password: "second-pw")
            mailer.setBehavior(.status("fail"))
            let refused = await wait { controller.resetWithSecurityAnswer(email: "quin@example.com", newPassword: "third-pw", answer: "Max", completion: $0) }
            // As App Services answers (realm-swift's tests): code unknown, this message.
            #expect((refused as? AppError)?.code == .unknown)
            #expect(refused?.localizedDescription == "failed to reset password for user \"quin@example.com\"")
        }
    }
}
