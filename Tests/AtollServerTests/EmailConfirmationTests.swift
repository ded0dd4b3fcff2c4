import AtollServer
import AtollTesting
import Foundation
import Testing

extension SerialAuthTests {
@Suite("E-mail confirmation")
struct EmailConfirmationTests {
    @Test func aTokenConfirmationLeavesTheUserPendingUntilConfirmed() async throws {
        try await withEmailServer { server, mail in
            #expect(try await server.http.register(email: "Ann@Example.com", password: "s3cret-pw").status == 201)
            let early = try await server.http.emailLogin(email: "ann@example.com", password: "s3cret-pw")
            #expect(early.status == 401)
            #expect(early.errorCode == "AuthError")
            #expect(early.object["error"] as? String == "confirmation required")
            // A wrong password is still just a wrong password.
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "wrong-pw").errorCode == "InvalidCredentials")

            let call = try #require(await mail.nextCall())
            #expect(call.path == "/deliver")
            #expect(call.purpose == "confirm")
            #expect(call.username == "ann@example.com")
            let token = try #require(call.token), tokenId = try #require(call.tokenId)
            #expect(token.count == 43)  // 32 random bytes, base64url
            #expect(try await server.http.confirm(token: token, tokenId: tokenId).status == 200)
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "s3cret-pw").status == 200)

            // Single use, and the name stays taken.
            let again = try await server.http.confirm(token: token, tokenId: tokenId)
            #expect(again.status == 400)
            #expect(again.errorCode == "BadRequest")
            #expect(try await server.http.register(email: "ann@example.com", password: "other-pw").object["error"] as? String
                    == "name already in use")
        }
    }

    @Test func aPendingNameIsInUse() async throws {
        try await withEmailServer { server, _ in
            _ = try await server.http.register(email: "bob@example.com", password: "s3cret-pw")
            let twice = try await server.http.register(email: "BOB@example.com", password: "s3cret-pw")
            #expect(twice.status == 409)
            #expect(twice.errorCode == "AccountNameInUse")
            #expect(twice.object["error"] as? String == "name already in use")
        }
    }

    @Test func resendSendsANewTokenAndAnswersLikeAppServicesForOthers() async throws {
        try await withEmailServer { server, mail in
            _ = try await server.http.register(email: "cy@example.com", password: "s3cret-pw")
            let first = try #require(await mail.nextCall())
            #expect(try await server.http.resendConfirmation("cy@example.com").status == 200)
            let second = try #require(await mail.nextCall())
            #expect(second.purpose == "confirm")
            #expect(second.token != first.token)
            #expect(second.tokenId != first.tokenId)
            // Both are valid until used (at most three are kept); the newer confirms.
            #expect(try await server.http.confirm(token: second.token!, tokenId: second.tokenId!).status == 200)
            // Confirming forgets the other confirmation tokens.
            #expect(try await server.http.confirm(token: first.token!, tokenId: first.tokenId!).status == 400)

            let confirmed = try await server.http.resendConfirmation("cy@example.com")
            #expect(confirmed.status == 409)
            #expect(confirmed.errorCode == "UserAlreadyConfirmed")
            let unknown = try await server.http.resendConfirmation("nobody@example.com")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "UserNotFound")
        }
    }

    @Test func onlyTheNewestTokensAreKept() async throws {
        try await withEmailServer { server, mail in
            _ = try await server.http.register(email: "dee@example.com", password: "s3cret-pw")
            var calls = [try #require(await mail.nextCall())]
            for _ in 0..<3 {
                #expect(try await server.http.resendConfirmation("dee@example.com").status == 200)
                calls.append(try #require(await mail.nextCall()))
            }
            // Four made, three kept: the first is gone.
            #expect(try await server.http.confirm(token: calls[0].token!, tokenId: calls[0].tokenId!).status == 400)
            #expect(try await server.http.confirm(token: calls[1].token!, tokenId: calls[1].tokenId!).status == 200)
        }
    }

    @Test func expiredForgedAndMisusedTokensAreRefused() async throws {
        let clock = ManualClock()
        let receiver = try await WebhookReceiver.start()
        defer { Task { try? await receiver.stop() } }
        // The registration outlives its tokens here: this is about tokens expiring.
        let configuration = TestServer.emailConfiguration(receiver) { $0.pendingRegistrationLifetime = 24 * 3600 }
        try await withServer(configuration, clock: clock) { server in
            _ = try await server.http.register(email: "eve@example.com", password: "s3cret-pw")
            let call = try #require(await receiver.nextCall())
            // Forged: the right id with another token, a made-up id, a token of another purpose.
            #expect(try await server.http.confirm(token: String(repeating: "A", count: 43), tokenId: call.tokenId!).status == 400)
            #expect(try await server.http.confirm(token: call.token!, tokenId: "0123456789abcdef01234567").status == 400)
            #expect(try await server.http.reset(password: "n3w-secret", token: call.token!, tokenId: call.tokenId!).status == 400)
            // A guess does not burn the real token: it still works, until it expires.
            _ = try await server.http.resendConfirmation("eve@example.com")
            let fresh = try #require(await receiver.nextCall())
            clock.advance(by: 30 * 60 + 1)
            let expired = try await server.http.confirm(token: fresh.token!, tokenId: fresh.tokenId!)
            #expect(expired.status == 400)
            #expect(expired.errorCode == "BadRequest")
            _ = try await server.http.resendConfirmation("eve@example.com")
            let last = try #require(await receiver.nextCall())
            #expect(try await server.http.confirm(token: last.token!, tokenId: last.tokenId!).status == 200)
        }
    }

    @Test func theConfirmationFunctionConfirmsPendsOrRefuses() async throws {
        try await withEmailServer(confirmation: .function, receiving: .status("success")) { server, mail in
            #expect(try await server.http.register(email: "fay@example.com", password: "s3cret-pw").status == 201)
            let call = try #require(await mail.nextCall())
            #expect(call.path == "/confirm")
            #expect(call.purpose == "confirm")
            #expect(call.username == "fay@example.com")
            #expect(try await server.http.emailLogin(email: "fay@example.com", password: "s3cret-pw").status == 200)

            mail.setBehavior(.status("pending"))
            #expect(try await server.http.register(email: "gus@example.com", password: "s3cret-pw").status == 201)
            let pending = try #require(await mail.nextCall())
            #expect(try await server.http.emailLogin(email: "gus@example.com", password: "s3cret-pw").errorCode == "AuthError")
            #expect(try await server.http.confirm(token: pending.token!, tokenId: pending.tokenId!).status == 200)
            #expect(try await server.http.emailLogin(email: "gus@example.com", password: "s3cret-pw").status == 200)

            mail.setBehavior(.status("fail"))
            let refused = try await server.http.register(email: "hal@example.com", password: "s3cret-pw")
            #expect(refused.status == 401)
            #expect(refused.errorCode == "AuthError")
            // A refused registration leaves no user behind: the name is free again.
            mail.setBehavior(.status("success"))
            #expect(try await server.http.register(email: "hal@example.com", password: "s3cret-pw").status == 201)
            #expect(try await server.http.emailLogin(email: "hal@example.com", password: "s3cret-pw").status == 200)
        }
    }

    @Test func retryCustomConfirmationRunsTheFunctionAgain() async throws {
        try await withEmailServer(confirmation: .function, receiving: .status("pending")) { server, mail in
            _ = try await server.http.register(email: "ida@example.com", password: "s3cret-pw")
            _ = try #require(await mail.nextCall())
            mail.setBehavior(.status("success"))
            #expect(try await server.http.retryCustomConfirmation("ida@example.com").status == 200)
            let retried = try #require(await mail.nextCall())
            #expect(retried.username == "ida@example.com")
            #expect(try await server.http.emailLogin(email: "ida@example.com", password: "s3cret-pw").status == 200)
            #expect(try await server.http.retryCustomConfirmation("ida@example.com").errorCode == "UserAlreadyConfirmed")
            #expect(try await server.http.retryCustomConfirmation("nobody@example.com").errorCode == "UserNotFound")
            // As App Services: a confirmed user is said so before the mode matters.
            #expect(try await server.http.resendConfirmation("ida@example.com").errorCode == "UserAlreadyConfirmed")
        }
    }

    @Test func aFunctionThatDoesNotAnswerLeavesTheUserPendingForARetry() async throws {
        try await withEmailServer(confirmation: .function, receiving: .httpStatus(500)) { server, mail in
            let failed = try await server.http.register(email: "jo@example.com", password: "s3cret-pw")
            #expect(failed.status == 500)
            #expect(failed.errorCode == "InternalError")
            mail.setBehavior(.status("success"))
            #expect(try await server.http.retryCustomConfirmation("jo@example.com").status == 200)
            #expect(try await server.http.emailLogin(email: "jo@example.com", password: "s3cret-pw").status == 200)
        }
    }

    @Test func automaticConfirmationIsTheDefault() async throws {
        try await withServer { server in
            let registered = try await server.http.register(email: "kim@example.com", password: "s3cret-pw")
            #expect(registered.status == 201)
            #expect(try await server.http.emailLogin(email: "kim@example.com", password: "s3cret-pw").status == 200)
            #expect(try await server.http.resendConfirmation("kim@example.com").errorCode == "UserAlreadyConfirmed")
        }
    }

    @Test func webhookRequestsAreSignedWithTheConfiguredSecret() async throws {
        let secret = String(repeating: "k", count: 32)
        try await withEmailServer(settings: { $0.webhookSecret = secret }) { server, mail in
            _ = try await server.http.register(email: "lee@example.com", password: "s3cret-pw")
            let call = try #require(await mail.nextCall())
            let signature = try #require(call.signature)
            #expect(signature == "sha256=" + HMACSHA256.hex(key: secret, call.body))
        }
    }
}
}
