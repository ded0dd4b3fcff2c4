import AtollServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Failed logins are throttled per account and per address (HTTP 429 with `Retry-After`), and a
/// flood of them does not keep other users from logging in (issue 10 §2).
@Suite struct LoginThrottlingTests {
    /// 1,000 wrong passwords for one account: all but the first few are 429s; meanwhile another
    /// user logs in.
    @Test func aFloodOfWrongPasswordsIsThrottledWhileOthersLogIn() async throws {
        let configuration = TestServer.configuration { $0.limits.failedLoginsPerAddress = 1_000_000 }
        try await withServer(configuration) { server in
            _ = try await server.http.register(email: "victim@example.com", password: "password1")
            _ = try await server.http.register(email: "other@example.com", password: "password2")
            let flood = Task {
                try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    var statuses: [Int: Int] = [:]
                    var retryAfter: Set<String> = []
                    var sent = 0
                    func send() {
                        group.addTask {
                            var request = URLRequest(url: URL(string: HTTP.loginPath(app: "tasks", provider: "local-userpass"), relativeTo: server.http.baseURL)!)
                            request.httpMethod = "POST"
                            request.httpBody = Data(HTTP.encode(["username": "victim@example.com", "password": "wrong-password"]).utf8)
                            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                            let (_, response) = try await HTTP.session.data(for: request)
                            let http = response as! HTTPURLResponse
                            return (http.statusCode, http.value(forHTTPHeaderField: "Retry-After"))
                        }
                        sent += 1
                    }
                    for _ in 0..<32 { send() }
                    while let (status, retry) = try await group.next() {
                        statuses[status, default: 0] += 1
                        if let retry { retryAfter.insert(retry) }
                        if sent < 1_000 { send() }
                    }
                    return (statuses, retryAfter)
                }
            }
            // Another user logs in while the flood goes on.
            try await Task.sleep(for: .milliseconds(100))
            let started = ContinuousClock.now
            let other = try await server.http.emailLogin(email: "other@example.com", password: "password2")
            let took = ContinuousClock.now - started
            #expect(other.status == 200)
            let (statuses, retryAfter) = try await flood.value
            print("login flood: \(statuses), another user's login took \(took)")
            #expect(statuses[429, default: 0] >= 990, "\(statuses)")
            #expect(statuses[401, default: 0] <= 10, "only the first failures check the password: \(statuses)")
            #expect(!retryAfter.isEmpty && retryAfter.allSatisfy { (Int($0) ?? 0) >= 1 })
            // The throttled account's own right password is refused too until the window passes.
            #expect(try await server.http.emailLogin(email: "victim@example.com", password: "password1").status == 429)
        }
    }

    @Test func failuresFromOneAddressAreThrottledAcrossAccounts() async throws {
        let configuration = TestServer.configuration { $0.limits.failedLoginsPerAddress = 5 }
        try await withServer(configuration) { server in
            var statuses: [Int] = []
            for i in 0..<8 {
                statuses.append(try await server.http.emailLogin(email: "nobody\(i)@example.com", password: "whatever1").status)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429, 429, 429])
            let metrics = try await server.http.send("GET", "/metrics").text
            #expect(metrics.contains("atoll_limit_refusals_total{limit=\"failedLoginsPerAddress\"} 3"), "\(metrics)")
        }
    }

    @Test func aSuccessfulLoginClearsTheAccountsFailures() async throws {
        let configuration = TestServer.configuration { $0.limits.failedLoginsPerAccount = 3 }
        try await withServer(configuration) { server in
            _ = try await server.http.register(email: "ann@example.com", password: "password1")
            for _ in 0..<2 { #expect(try await server.http.emailLogin(email: "ann@example.com", password: "nope-nope").status == 401) }
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "password1").status == 200)
            for _ in 0..<2 { #expect(try await server.http.emailLogin(email: "ann@example.com", password: "nope-nope").status == 401) }
            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "password1").status == 200)
        }
    }

    @Test func newAppsInDevelopmentModeAreLimitedPerMinute() async throws {
        let configuration = TestServer.configuration { $0.limits.newAppsPerMinute = 2 }
        try await withServer(configuration) { server in
            #expect(try await server.http.anonymousLogin(app: "one").access_token.isEmpty == false)
            #expect(try await server.http.anonymousLogin(app: "two").access_token.isEmpty == false)
            let third = try await server.http.logIn(app: "three", provider: "anon-user")
            #expect(third.status == 429)
            #expect(third.errorCode == "TooManyRequests")
            #expect(try await server.http.anonymousLogin(app: "one").access_token.isEmpty == false, "known apps are not limited")
        }
    }

    /// Sign-ups from one address are limited per hour (registrations and anonymous logins alike);
    /// users it already has keep logging in.
    @Test func newUsersFromOneAddressAreLimitedPerHour() async throws {
        let configuration = TestServer.configuration { $0.limits.newUsersPerAddressPerHour = 3 }
        try await withServer(configuration) { server in
            #expect(try await server.http.register(email: "ann@example.com", password: "password1").status == 201)
            #expect(try await server.http.register(email: "bob@example.com", password: "password2").status == 201)
            _ = try await server.http.anonymousLogin()

            let registration = try await server.http.register(email: "eve@example.com", password: "password3")
            #expect(registration.status == 429)
            #expect(registration.errorCode == "TooManyRequests")
            #expect(Int(registration.retryAfter ?? "") ?? 0 > 3_000, "the window is an hour")
            #expect(try await server.http.logIn(app: "tasks", provider: "anon-user").status == 429)

            #expect(try await server.http.emailLogin(email: "ann@example.com", password: "password1").status == 200)
            #expect(try await server.http.emailLogin(email: "eve@example.com", password: "password3").status == 401,
                    "the refused registration made no user")
            let metrics = try await server.http.send("GET", "/metrics").text
            #expect(metrics.contains("atoll_limit_refusals_total{limit=\"newUsersPerAddressPerHour\"} 2"), "\(metrics)")
        }
    }
}
