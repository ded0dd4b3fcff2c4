import AtollServer
import Foundation
import Testing

@Suite("Server lifecycle, health and metrics")
struct ServerLifecycleTests {
    @Test func healthAnswersOK() async throws {
        try await withServer { server in
            let health = try await server.http.send("GET", "/health")
            #expect(health.status == 200)
            #expect(health.object["status"] as? String == "ok")
            #expect(server.running.port > 0)
            #expect(server.running.baseURL.absoluteString == "http://127.0.0.1:\(server.running.port)")
        }
    }

    @Test func anUnknownPathIsAJSONNotFound() async throws {
        try await withServer { server in
            let answer = try await server.http.send("GET", "/api/client/v1/nothing-here")
            #expect(answer.status == 404)
            #expect(answer.errorCode == "NotFound")
        }
    }

    @Test func metricsCountRequestsAndLoginsInPrometheusFormat() async throws {
        try await withServer { server in
            _ = try await server.http.anonymousLogin()
            _ = try await server.http.emailLogin(email: "nobody@example.com", password: "whatever")
            _ = try await server.http.send("GET", "/health")
            let metrics = try await server.http.send("GET", "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.contentType?.hasPrefix("text/plain") == true)
            let text = metrics.text
            #expect(text.contains("# TYPE atoll_http_requests_total counter"))
            #expect(text.contains(#"atoll_http_requests_total{route="/health",method="GET",status="200"} 1"#))
            #expect(
                text.contains(
                    #"atoll_http_requests_total{route="/api/client/v1/app/{app}/auth/providers/{provider}/login",method="POST",status="401"} 1"#
                ))
            #expect(text.contains(#"atoll_logins_total{provider="anon-user",outcome="success"} 1"#))
            #expect(text.contains(#"atoll_logins_total{provider="local-userpass",outcome="failure"} 1"#))
            #expect(text.contains("atoll_sync_sessions_active 0"))
            #expect(text.contains("# TYPE atoll_sync_integration_duration_seconds histogram"))
        }
    }

    @Test func aRestartOnTheSameDataKeepsUsersAndTokens() async throws {
        let configuration = TestServer.configuration()
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let first = try await TestServer.start(configuration)
        _ = try await first.http.register(email: "elrond@rivendell.example", password: "council")
        let session = try await first.http.emailLogin(email: "elrond@rivendell.example", password: "council")
            .decode(HTTP.Login.self)
        let secretFile = first.dataFolder.appendingPathComponent("token-secret")
        let secret = try String(contentsOf: secretFile, encoding: .utf8)
        #expect(secret.trimmingCharacters(in: .whitespacesAndNewlines).utf8.count >= 32)

        let second = try await first.restarted()
        do {
            #expect(try String(contentsOf: secretFile, encoding: .utf8) == secret)
            let profile = try await second.http.profile(session.access_token)
            #expect(profile.status == 200)
            #expect(profile.object["user_id"] as? String == session.user_id)
            #expect(try await second.http.refresh(session.refresh_token).status == 201)
            let login = try await second.http.emailLogin(email: "elrond@rivendell.example", password: "council")
            #expect(try login.decode(HTTP.Login.self).user_id == session.user_id)
        } catch {
            try? await second.running.shutdown()
            throw error
        }
        try await second.running.shutdown()
    }

    @Test func aServerCannotStartOnAPortInUse() async throws {
        try await withServer { server in
            var configuration = TestServer.configuration()
            configuration.port = server.running.port
            defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
            await #expect(throws: (any Error).self) {
                let other = try await TestServer.start(configuration)
                try await other.running.shutdown()
            }
            let health = try await server.http.send("GET", "/health")
            #expect(health.status == 200)
        }
    }
}
