@_spi(Testing) import Atoll
import AtollServer
import AtollTesting
import Foundation
import Testing

/// Runs `body` with a webhook receiver and a sync test server whose app uses it for e-mail/password.
func withEmailPasswordServer(
    confirmation: ServerConfiguration.EmailPassword.Confirmation,
    receiving behavior: WebhookReceiver.Behavior = .ok,
    customUserData: ServerConfiguration.CustomUserData? = nil,
    _ body: (SyncTestServer, WebhookReceiver) async throws -> Void
) async throws {
    let mail = try await WebhookReceiver.start(behavior)
    let (deliver, confirm, reset) = (mail.url("/deliver"), mail.url("/confirm"), mail.url("/reset"))
    do {
        try await withSyncTestServer({ configuration in
            var app = ServerConfiguration.App(id: "test-app")
            app.emailPassword = .init(confirmation: confirmation, deliveryURL: deliver, confirmationFunctionURL: confirm,
                                      resetFunctionURL: reset, webhookTimeout: 60)
            app.customUserData = customUserData
            configuration.apps = [app]
        }) { server in
            try await body(server, mail)
        }
    } catch {
        try? await mail.stop()
        throw error
    }
    try await mail.stop()
}

/// An error handed to a completion handler.
func completionError(_ start: (@escaping @Sendable (Swift.Error?) -> Void) -> Void) async -> Swift.Error? {
    await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
}

extension SerialAppServicesTests {
@Suite struct EmailPasswordAuthTests {
    @Test func aUserConfirmsWithTheDeliveredToken() async throws {
        try await withEmailPasswordServer(confirmation: .token) { server, mail in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "ann@example.com", password: "s3cret-pw")
            let credentials = Credentials.emailPassword(email: "ann@example.com", password: "s3cret-pw")
            await #expect { try await app.login(credentials: credentials) } throws: { error in
                (error as? AppError)?.code == .authError && error.localizedDescription == "confirmation required"
            }
            let call = try #require(await mail.nextCall())
            try await app.emailPasswordAuth.confirmUser(call.token!, tokenId: call.tokenId!)
            let user = try await app.login(credentials: credentials)
            #expect(user.profile.email == "ann@example.com")
            await #expect { try await app.emailPasswordAuth.confirmUser(call.token!, tokenId: call.tokenId!) }
                throws: { ($0 as? AppError)?.code == .badRequest }
        }
    }

    @Test func resendAndItsErrors() async throws {
        try await withEmailPasswordServer(confirmation: .token) { server, mail in
            let auth = server.app().emailPasswordAuth
            try await auth.registerUser(email: "bo@example.com", password: "s3cret-pw")
            _ = try #require(await mail.nextCall())
            try await auth.resendConfirmationEmail("bo@example.com")
            let resent = try #require(await mail.nextCall())
            try await auth.confirmUser(resent.token!, tokenId: resent.tokenId!)
            await #expect { try await auth.resendConfirmationEmail("bo@example.com") } throws: { ($0 as? AppError)?.code == .userAlreadyConfirmed }
            await #expect { try await auth.resendConfirmationEmail("nobody@example.com") } throws: { ($0 as? AppError)?.code == .userNotFound }
            await #expect { try await auth.registerUser(email: "bo@example.com", password: "s3cret-pw") } throws: { error in
                (error as? AppError)?.code == .accountNameInUse && error.localizedDescription == "name already in use"
            }
            await #expect { try await auth.registerUser(email: "cy@example.com", password: "short") } throws: { ($0 as? AppError)?.code == .invalidPassword }
        }
    }

    @Test func theCompletionFormsReportSuccessAndErrors() async throws {
        try await withEmailPasswordServer(confirmation: .token) { server, mail in
            let auth = server.app().emailPasswordAuth
            #expect(await completionError { auth.registerUser(email: "dee@example.com", password: "s3cret-pw", completion: $0) } == nil)
            _ = try #require(await mail.nextCall())
            #expect(await completionError { auth.resendConfirmationEmail("dee@example.com", completion: $0) } == nil)
            let call = try #require(await mail.nextCall())
            #expect(await completionError { auth.confirmUser(call.token!, tokenId: call.tokenId!, completion: $0) } == nil)
            #expect(await completionError { auth.sendResetPasswordEmail("dee@example.com", completion: $0) } == nil)
            let reset = try #require(await mail.nextCall())
            #expect(await completionError { auth.resetPassword(to: "n3w-secret", token: reset.token!, tokenId: reset.tokenId!, completion: $0) } == nil)
            let refused = await completionError { auth.retryCustomConfirmation("dee@example.com", completion: $0) }
            #expect((refused as? AppError)?.code == .unknown)  // this app confirms by token
            #expect(refused?.localizedDescription == "cannot run confirmation for dee@example.com: confirmation is by token, not by a function")
            mail.setBehavior(.status("success"))
            #expect(await completionError { auth.callResetPasswordFunction(email: "dee@example.com", password: "f0urth-pw", args: ["x"], $0) } == nil)
            _ = try await server.app().login(credentials: .emailPassword(email: "dee@example.com", password: "f0urth-pw"))
        }
    }

    @Test func retryCustomConfirmationAfterAPendingFunction() async throws {
        try await withEmailPasswordServer(confirmation: .function, receiving: .status("pending")) { server, mail in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "eve@example.com", password: "s3cret-pw")
            mail.setBehavior(.status("success"))
            try await app.emailPasswordAuth.retryCustomConfirmation("eve@example.com")
            _ = try await app.login(credentials: .emailPassword(email: "eve@example.com", password: "s3cret-pw"))
            mail.setBehavior(.status("fail"))
            await #expect { try await app.emailPasswordAuth.registerUser(email: "fay@example.com", password: "s3cret-pw") }
                throws: { ($0 as? AppError)?.code == .authError }
        }
    }

    @Test func resettingThePasswordLogsOutEveryDevice() async throws {
        try await withEmailPasswordServer(confirmation: .automatic) { server, mail in
            let phone = server.app(device: "phone")
            try await phone.emailPasswordAuth.registerUser(email: "gus@example.com", password: "old-secret")
            let user = try await phone.login(credentials: .emailPassword(email: "gus@example.com", password: "old-secret"))
            let laptop = server.app(device: "laptop")
            try await laptop.emailPasswordAuth.sendResetPasswordEmail("gus@example.com")
            let call = try #require(await mail.nextCall())
            try await laptop.emailPasswordAuth.resetPassword(to: "new-secret", token: call.token!, tokenId: call.tokenId!)
            // The phone's refresh token is revoked: its next refresh logs it out.
            await #expect { _ = try await user.refreshCustomData() } throws: { ($0 as? AppError)?.code == .invalidSession }
            #expect(user.state == .loggedOut)
            _ = try await laptop.login(credentials: .emailPassword(email: "gus@example.com", password: "new-secret"))
        }
    }

    /// realm-swift's own provider-client tests against App Services, case by case: the code and
    /// the `localizedDescription` apps compare and show (Atoll's explanation goes to its log).
    @Test func errorsCarryAppServicesOwnCodesAndMessages() async throws {
        try await withEmailPasswordServer(confirmation: .automatic, receiving: .status("fail")) { server, _ in
            let app = server.app()
            let auth = app.emailPasswordAuth
            let email = "realm_tests_do_autoverify@example.com"
            try await auth.registerUser(email: email, password: "a-password")
            func expect(_ code: AppError.Code, _ message: String, _ body: () async throws -> Void,
                        sourceLocation: SourceLocation = #_sourceLocation) async {
                do {
                    try await body()
                    Issue.record("no error: expected \(message)", sourceLocation: sourceLocation)
                } catch let error as AppError {
                    #expect(error.code == code, sourceLocation: sourceLocation)
                    #expect(error.localizedDescription == message, sourceLocation: sourceLocation)
                } catch {
                    Issue.record("\(error)", sourceLocation: sourceLocation)
                }
            }
            await expect(.badRequest, "invalid token data") { try await auth.confirmUser("atoken", tokenId: "atokenid") }
            await expect(.userNotFound, "user not found") { try await auth.resendConfirmationEmail("atoken") }
            await expect(.userAlreadyConfirmed, "already confirmed") { try await auth.resendConfirmationEmail(email) }
            await expect(.unknown, "cannot run confirmation for \(email): automatic confirmation is enabled") {
                try await auth.retryCustomConfirmation(email)
            }
            await expect(.userNotFound, "user not found") { try await auth.sendResetPasswordEmail("atoken") }
            await expect(.badRequest, "invalid token data") { try await auth.resetPassword(to: "password", token: "atoken", tokenId: "tokenId") }
            await expect(.unknown, "failed to reset password for user \"\(email)\"") {
                try await auth.callResetPasswordFunction(email: email, password: "another-password", args: [[:]])
            }
            await expect(.invalidPassword, "unauthorized") { _ = try await app.login(credentials: .emailPassword(email: email, password: "INVALID_PASSWORD")) }
            await expect(.invalidPassword, "unauthorized") {
                _ = try await app.login(credentials: .emailPassword(email: "INVALID_USERNAME@example.com", password: "INVALID_PASSWORD"))
            }
            await expect(.accountNameInUse, "name already in use") { try await auth.registerUser(email: email, password: "a-password") }
        }
    }

    @Test func theResetFunctionGetsTheArgumentsAsExtendedJSON() async throws {
        try await withEmailPasswordServer(confirmation: .automatic, receiving: .status("success")) { server, mail in
            let app = server.app()
            try await app.emailPasswordAuth.registerUser(email: "hal@example.com", password: "old-secret")
            let id = ObjectId.generate()
            let args: [AnyBSON] = ["pet", 42, .objectId(id), ["answer": "Rex", "sure": true]]
            try await app.emailPasswordAuth.callResetPasswordFunction(email: "hal@example.com", password: "new-secret", args: args)
            let call = try #require(await mail.nextCall())
            let arguments = try #require(call.arguments)
            #expect(arguments.count == 4)
            #expect(arguments[0] as? String == "pet")
            #expect((arguments[1] as? NSNumber)?.intValue == 42)
            #expect((arguments[2] as? [String: Any])?["$oid"] as? String == id.stringValue)
            #expect((arguments[3] as? [String: Any])?["answer"] as? String == "Rex")
            _ = try await app.login(credentials: .emailPassword(email: "hal@example.com", password: "new-secret"))
            mail.setBehavior(.status("fail"))
            await #expect { try await app.emailPasswordAuth.callResetPasswordFunction(email: "hal@example.com", password: "third-pw", args: []) }
                throws: { ($0 as? AppError)?.code == .unknown && $0.localizedDescription == "failed to reset password for user \"hal@example.com\"" }
        }
    }
}
}
