import AtollCore
import AtollServer
import AtollTesting
import Foundation
import Testing

/// A sync session lives no longer than the login it was bound with (issue 10 §1): logging out
/// ends the sessions of that device, deleting or disabling the user ends all of theirs, and a
/// session whose access token expires without a refresh ends with "access token expired".
@Suite struct SyncSessionEndTests {
    /// A bound, identified partition session on its own connection.
    static func session(_ server: TestServer, token: String) async throws -> SyncTestClient {
        let client = try await SyncTestClient.connect(to: server)
        _ = try await client.hello()
        let answer = try await client.bind(1, partition: .string("home"), token: token)
        guard answer.identAnswer != nil else { throw UnexpectedServerAnswer(message: answer) }
        return client
    }

    struct UnexpectedServerAnswer: Error { let message: ServerMessage }

    /// The error that ends session 1, skipping downloads, within `timeout`.
    static func endingError(_ client: SyncTestClient, timeout: Duration = .seconds(10)) async throws -> ErrorMessage {
        try await client.next(timeout: timeout) { $0.errorMessage }
    }

    /// Whether session 1 still answers a mark.
    static func isAlive(_ client: SyncTestClient, request: UInt64) async throws -> Bool {
        client.send(.mark(Mark(session: 1, requestID: request)))
        return try await client.next(timeout: .seconds(60)) { message -> Bool? in
            if let answer = message.markAnswer, answer.requestID == request { return true }
            if message.errorMessage != nil { return false }
            return nil
        }
    }

    static func emailLogin(_ server: TestServer, _ email: String) async throws -> HTTP.Login {
        try await server.http.emailLogin(email: email, password: "password1").decode(HTTP.Login.self)
    }

    @Test func loggingOutEndsTheSessionsOfThatDeviceOnly() async throws {
        try await withServer { server in
            _ = try await server.http.register(email: "ann@example.com", password: "password1")
            let phone = try await Self.emailLogin(server, "ann@example.com")
            let laptop = try await Self.emailLogin(server, "ann@example.com")
            let onPhone = try await Self.session(server, token: phone.access_token)
            let onLaptop = try await Self.session(server, token: laptop.access_token)

            let answer = try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: phone.refresh_token)
            #expect(answer.status < 300)
            let error = try await Self.endingError(onPhone)
            #expect(error.code == .userLoggedOut)
            #expect(error.action == .logOut)
            #expect(try await Self.isAlive(onLaptop, request: 1), "the laptop's session goes on")
            await onPhone.close()
            await onLaptop.close()
        }
    }

    /// A token refreshed through the HTTP API keeps its device: logging out still ends the session.
    @Test func aRefreshedTokenKeepsItsDevice() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let refreshed = try await server.http.refresh(login.refresh_token).object["access_token"] as? String
            let client = try await Self.session(server, token: try #require(refreshed))
            _ = try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: login.refresh_token)
            #expect(try await Self.endingError(client).code == .userLoggedOut)
            await client.close()
        }
    }

    @Test func deletingItselfEndsTheUsersSessions() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let client = try await Self.session(server, token: login.access_token)
            let answer = try await server.http.send("DELETE", "/api/client/v1/auth/delete", bearer: login.access_token)
            #expect(answer.status < 300)
            #expect(try await Self.endingError(client).code == .userLoggedOut)
            await client.close()
        }
    }

    /// A user deleted between a session's bind (where the token is checked) and its ident (where
    /// the session becomes one that deleting the user ends) is not missed: the ident is refused.
    @Test func aUserDeletedBetweenBindAndIdentGetsNoSession() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            client.send(.bind(Bind(session: 1, target: .partition(.string("home")), accessToken: login.access_token)))
            try await _Concurrency.Task.sleep(for: .milliseconds(200))  // the bind is handled
            let answer = try await server.http.send("DELETE", "/api/client/v1/auth/delete", bearer: login.access_token)
            #expect(answer.status < 300)
            client.send(.ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)))
            let first = try await client.next(timeout: .seconds(10)) { message -> ServerMessage? in
                message.identAnswer != nil || message.errorMessage != nil ? message : nil
            }
            #expect(first.identAnswer == nil)
            #expect(first.errorMessage?.code == .userLoggedOut)
            await client.close()
        }
    }

    /// Through `AuthService` itself, not only the admin route.
    @Test func disablingEndsTheUsersSessions() async throws {
        try await withServer { server in
            let login = try await server.http.anonymousLogin()
            let client = try await Self.session(server, token: login.access_token)
            try await server.auth.setUserDisabled(login.user_id, disabled: true)
            #expect(try await Self.endingError(client).code == .userLoggedOut)
            await client.close()
        }
    }

    /// The server checks a session's token on each message, by its clock.
    @Test func aSessionWhoseTokenExpiredIsEndedAtItsNextMessage() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let login = try await server.http.anonymousLogin()
            let client = try await Self.session(server, token: login.access_token)
            #expect(try await Self.isAlive(client, request: 1))
            clock.advance(by: server.auth.accessTokens.lifetime + 1)
            client.send(.mark(Mark(session: 1, requestID: 2)))
            let error = try await Self.endingError(client)
            #expect(error.code == .accessTokenExpired)
            #expect(error.action == .refreshAccessToken)
            await client.close()
        }
    }

    /// An idle session ends when its token expires (its timer re-checks the clock until then).
    @Test func anIdleSessionEndsWhenItsTokenExpires() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let login = try await server.http.anonymousLogin()
            let client = try await Self.session(server, token: login.access_token)
            // Nothing in flight when the clock jumps: a write still being flushed would look stalled
            // for the whole jump to the connection's write watchdog, which closes the connection
            // (seen about once in ten runs). A mark round trip, then a moment for the write to end.
            #expect(try await Self.isAlive(client, request: 1))
            try await _Concurrency.Task.sleep(for: .milliseconds(100))
            // The timer sleeps on the server's clock: the advance wakes it and it finds the token expired.
            clock.advance(by: server.auth.accessTokens.lifetime + 1)
            let error = try await Self.endingError(client, timeout: .seconds(30))
            #expect(error.code == .accessTokenExpired)
            await client.close()
        }
    }

    @Test func refreshingTheTokenKeepsTheSessionPastTheOldExpiry() async throws {
        let clock = ManualClock()
        try await withServer(clock: clock) { server in
            let login = try await server.http.anonymousLogin()
            let client = try await Self.session(server, token: login.access_token)
            clock.advance(by: 60)
            let fresh = try #require(try await server.http.refresh(login.refresh_token).object["access_token"] as? String)
            client.send(.refreshAccessToken(RefreshAccessToken(session: 1, accessToken: fresh)))
            // Answered after the refresh (messages are handled in order): the server has the new token.
            #expect(try await Self.isAlive(client, request: 1))
            clock.advance(by: server.auth.accessTokens.lifetime - 30)  // past the first token's expiry, not the second's
            #expect(try await Self.isAlive(client, request: 2))
            await client.close()
        }
    }
}
