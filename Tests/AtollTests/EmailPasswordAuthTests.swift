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
            #expect((refused as? AppError)?.code == .badRequest)  // this app confirms by token
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
                throws: { ($0 as? AppError)?.code == .authError }
        }
    }
}
}
