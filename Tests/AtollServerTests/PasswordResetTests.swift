import AtollServer
import AtollTesting
import Foundation
import Testing

extension SerialAuthTests {
@Suite("Password reset")
struct PasswordResetTests {
    /// Registers and logs in `email` (automatic confirmation), returning the session.
    private func registered(_ server: TestServer, _ email: String, _ password: String = "old-secret") async throws -> HTTP.Login {
        #expect(try await server.http.register(email: email, password: password).status == 201)
        return try await server.http.emailLogin(email: email, password: password).decode(HTTP.Login.self)
    }

    @Test func aResetTokenSetsANewPasswordAndEndsEverySession() async throws {
        try await withEmailServer(confirmation: .automatic) { server, mail in
            let session = try await registered(server, "ann@example.com")
            #expect(try await server.http.sendReset("ANN@example.com").status == 200)
            let call = try #require(await mail.nextCall())
            #expect(call.path == "/deliver")
            #expect(call.purpose == "reset")
            #expect(call.username == "ann@example.com")
            #expect(try await server.http.reset(password: "new-secret", token: call.token!, tokenId: call.tokenId!).status == 200)

            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "old-secret").errorCode == "InvalidCredentials")
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "new-secret").status == 200)
            // The sessions opened with the old password are over.
            #expect(try await server.http.refresh(session.refresh_token).status == 401)
            // The token was used.
            #expect(try await server.http.reset(password: "third-secret", token: call.token!, tokenId: call.tokenId!).status == 400)
        }
    }

    @Test func aResetChecksThePasswordBeforeUsingTheToken() async throws {
        try await withEmailServer(confirmation: .automatic) { server, mail in
            _ = try await registered(server, "bo@example.com")
            _ = try await server.http.sendReset("bo@example.com")
            let call = try #require(await mail.nextCall())
            let short = try await server.http.reset(password: "short", token: call.token!, tokenId: call.tokenId!)
            #expect(short.status == 400)
            #expect(short.errorCode == "InvalidPassword")
            #expect(try await server.http.reset(password: "long-enough", token: call.token!, tokenId: call.tokenId!).status == 200)
        }
    }

    @Test func anUnknownAddressIsUserNotFound() async throws {
        try await withEmailServer(confirmation: .automatic) { server, mail in
            let unknown = try await server.http.sendReset("nobody@example.com")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "UserNotFound")
            #expect(mail.calls.isEmpty)
        }
    }

    @Test func theResetFunctionApprovesRefusesOrPends() async throws {
        try await withEmailServer(confirmation: .automatic, receiving: .status("success")) { server, mail in
            _ = try await registered(server, "cy@example.com")
            let approved = try await server.http.callReset("cy@example.com", password: "approved-pw",
                                                           argumentsJSON: #"["pet's name", 42, {"answer": "Rex"}]"#)
            #expect(approved.status == 200)
            let call = try #require(await mail.nextCall())
            #expect(call.path == "/reset")
            #expect(call.purpose == "reset")
            #expect(call.arguments?.count == 3)
            #expect(call.arguments?.first as? String == "pet's name")
            #expect(try await server.http.emailLogin(email: "cy@example.com", password: "approved-pw").status == 200)

            mail.setBehavior(.status("fail"))
            let refused = try await server.http.callReset("cy@example.com", password: "refused-pw")
            #expect(refused.status == 400)
            #expect(refused.errorCode == "Unknown")
            #expect(refused.text.contains("failed to reset password for user"))
            #expect(try await server.http.emailLogin(email: "cy@example.com", password: "approved-pw").status == 200)
            _ = await mail.nextCall()

            mail.setBehavior(.status("pending"))
            #expect(try await server.http.callReset("cy@example.com", password: "ignored-pw").status == 200)
            let pending = try #require(await mail.nextCall())
            #expect(try await server.http.emailLogin(email: "cy@example.com", password: "approved-pw").status == 200)
            // The function handed the token on; the user comes back with it.
            #expect(try await server.http.reset(password: "finally-pw", token: pending.token!, tokenId: pending.tokenId!).status == 200)
            #expect(try await server.http.emailLogin(email: "cy@example.com", password: "finally-pw").status == 200)
        }
    }

    @Test func withoutAResetFunctionTheCallIsABadRequest() async throws {
        try await withEmailServer(confirmation: .automatic, settings: { $0.resetFunctionURL = nil }) { server, _ in
            _ = try await registered(server, "dee@example.com")
            #expect(try await server.http.callReset("dee@example.com", password: "whatever-pw").errorCode == "BadRequest")
        }
    }

    @Test func requestsPerAddressAreLimited() async throws {
        try await withEmailServer(confirmation: .automatic, settings: { $0.requestsPerAddressPerHour = 2 }) { server, _ in
            _ = try await registered(server, "eve@example.com")
            #expect(try await server.http.sendReset("eve@example.com").status == 200)
            #expect(try await server.http.sendReset("Eve@Example.com").status == 200)
            let limited = try await server.http.sendReset("eve@example.com")
            #expect(limited.status == 429)
            #expect(limited.errorCode == "TooManyRequests")
            // Unknown addresses count too, and one address's limit is not another's.
            #expect(try await server.http.sendReset("nobody@example.com").status == 404)
            #expect(try await server.http.sendReset("nobody@example.com").status == 404)
            #expect(try await server.http.sendReset("nobody@example.com").status == 429)
            _ = try await registered(server, "fay@example.com")
            #expect(try await server.http.sendReset("fay@example.com").status == 200)
        }
    }
}
}
