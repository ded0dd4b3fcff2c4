import AtollServer
import AtollTesting
import Foundation
import Testing

/// Functions served by webhooks (docs/server.md, "Functions"): a logged-in user's call reaches the
/// function's webhook with the user and the arguments, and everything a caller or a broken
/// webhook controls is bounded and answered with a typed error.
extension SerialAuthTests {
@Suite("Function calls")
struct FunctionCallTests {
    @Test func aCallReachesTheWebhookSignedWithTheUserAndTheArguments() async throws {
        try await withFunctionServer { server, hooks in
            let login = try await server.http.anonymousLogin()
            let answer = try await server.http.callFunction("sum", argumentsJSON: #"[{"$numberInt": "1"}, {"$numberLong": "2"}, 3.5]"#,
                                                            bearer: login.access_token)
            #expect(answer.status == 200)
            #expect(answer.text == #"{"$numberInt":"6"}"#)
            let call = try #require(hooks.calls.first)
            #expect(call.path == "/sum")
            #expect(call.json["purpose"] as? String == "call")
            #expect(call.json["name"] as? String == "sum")
            #expect(call.json["runAsSystem"] as? Bool == false)
            let user = try #require(call.json["user"] as? [String: Any])
            #expect(user["id"] as? String == login.user_id)
            #expect((user["identities"] as? [[String: Any]])?.first?["provider_type"] as? String == "anon-user")
            // Canonical extended JSON goes through unchanged.
            #expect((call.arguments?.first as? [String: String]) == ["$numberInt": "1"])
            #expect(call.signature == "sha256=" + HMACSHA256.hex(key: FunctionAnswers.secret, call.body))
        }
    }

    @Test func unknownPrivateUnportedAndForbiddenFunctionsAreTypedErrors() async throws {
        try await withFunctionServer { server, hooks in
            let token = try await server.http.anonymousLogin().access_token
            let unknown = try await server.http.callFunction("nope", bearer: token)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "FunctionNotFound")
            #expect(unknown.object["error"] as? String == "function not found: 'nope'")
            // A name that is no function name is not echoed back.
            let odd = try await server.http.callFunction("../<script>", bearer: token)
            #expect(odd.errorCode == "FunctionNotFound")
            #expect(!odd.text.contains("script"))
            #expect(try await server.http.callFunction("secret", bearer: token).errorCode == "NotCallable")
            #expect(try await server.http.callFunction("adminOnly", bearer: token).errorCode == "NotCallable")
            #expect(try await server.http.callFunction("unported", bearer: token).errorCode == "FunctionInvalid")
            #expect(hooks.calls.isEmpty)
        }
    }

    @Test func onlyLiveLoginsCall() async throws {
        try await withFunctionServer { server, hooks in
            let noToken = try await server.http.callFunction("sum", bearer: nil)
            #expect(noToken.status == 401)
            #expect(noToken.errorCode == "InvalidToken")
            #expect(try await server.http.callFunction("sum", bearer: "not.a.token").errorCode == "InvalidToken")
            let login = try await server.http.anonymousLogin()
            _ = try await server.http.send("DELETE", "/api/client/v1/auth/session", bearer: login.refresh_token)
            // The access token is still unexpired, but its login is gone.
            #expect(try await server.http.callFunction("sum", bearer: login.access_token).errorCode == "InvalidToken")
            // Another app's token calls nothing here.
            let other = try await server.http.send("POST", HTTP.functionPath("elsewhere"), bearer: login.access_token, body: #"{"name":"sum"}"#)
            #expect(other.status >= 400)
            #expect(hooks.calls.isEmpty)
        }
    }

    @Test func hugeDeepAndMalformedCallsAreRefusedBeforeTheWebhook() async throws {
        try await withFunctionServer(settings: { $0.maxArgumentBytes = 64 * 1024 }) { server, hooks in
            let token = try await server.http.anonymousLogin().access_token
            let huge = "[" + String(repeating: #""aaaaaaaaaaaaaaaa","#, count: 8000) + "1]"
            let tooLarge = try await server.http.callFunction("sum", argumentsJSON: huge, bearer: token)
            #expect(tooLarge.status == 400)
            #expect(tooLarge.errorCode == "BadRequest")
            let deep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
            let tooDeep = try await server.http.callFunction("sum", argumentsJSON: "[\(deep)]", bearer: token)
            #expect(tooDeep.errorCode == "BadRequest")
            #expect(tooDeep.text.contains("deeper"))
            for body in ["{", "[]", "null", #"{"name": 5}"#, #"{"arguments": []}"#, #"{"name": "sum", "arguments": {}}"#] {
                let answer = try await server.http.send("POST", HTTP.functionPath(), bearer: token, body: body)
                #expect(answer.errorCode == "BadRequest", "\(body)")
            }
            #expect(hooks.calls.isEmpty)
            // And the server still serves.
            #expect(try await server.http.callFunction("sum", argumentsJSON: "[1, 2]", bearer: token).text == #"{"$numberInt":"3"}"#)
        }
    }

    @Test func aHangingWebhookTimesOutAndHoldsUpNoOtherRequest() async throws {
        try await withFunctionServer(receiving: .hang, settings: { $0.timeout = 3 }) { server, hooks in
            let token = try await server.http.anonymousLogin().access_token
            let http = server.http
            let stuck = Task { try await http.callFunction("sum", bearer: token) }
            #expect(await waitUntil(timeout: .seconds(60)) { hooks.hangingCalls == 1 })
            // While the function hangs, the server answers others.
            #expect(try await server.http.anonymousLogin().user_id.isEmpty == false)
            #expect(try await server.http.callFunction("unported", bearer: token).errorCode == "FunctionInvalid")
            #expect(hooks.hangingCalls == 1)
            let answer = try await stuck.value
            #expect(answer.errorCode == "ExecutionTimeLimitExceeded")
            #expect(answer.object["error"] as? String == "execution time limit exceeded")
            hooks.release()
        }
    }

    @Test func aHundredMegabyteAnswerIsCutOffAndRefused() async throws {
        try await withFunctionServer(receiving: .hugeBody(100 << 20)) { server, _ in
            let token = try await server.http.anonymousLogin().access_token
            let answer = try await server.http.callFunction("sum", bearer: token)
            #expect(answer.errorCode == "FunctionExecutionError")
            #expect(answer.text.contains("answered too much"))
        }
    }

    @Test func aFunctionsErrorAndABrokenWebhookAreExecutionErrors() async throws {
        try await withFunctionServer(receiving: .respond { _ in #"{"error": "boom: the ledger is closed"}"# }) { server, hooks in
            let token = try await server.http.anonymousLogin().access_token
            let failed = try await server.http.callFunction("sum", bearer: token)
            #expect(failed.errorCode == "FunctionExecutionError")
            #expect(failed.object["error"] as? String == "boom: the ledger is closed")
            hooks.setBehavior(.httpStatus(500))
            #expect(try await server.http.callFunction("sum", bearer: token).errorCode == "FunctionExecutionError")
            hooks.setBehavior(.respond { _ in String(repeating: "[", count: 5000) })
            #expect(try await server.http.callFunction("sum", bearer: token).errorCode == "FunctionExecutionError")
            hooks.setBehavior(.respond { _ in "not json" })
            #expect(try await server.http.callFunction("sum", bearer: token).errorCode == "FunctionExecutionError")
            let metrics = try await server.http.send("GET", "/metrics").text
            #expect(metrics.contains(#"atoll_function_calls_total{outcome="error"} 1"#))
            #expect(metrics.contains(#"atoll_function_calls_total{outcome="failed"} 3"#))
        }
    }

    @Test func callsInFlightAreBoundedPerUserAndPerApp() async throws {
        try await withFunctionServer(receiving: .hang, settings: {
            $0.callsInFlightPerUser = 2
            $0.callsInFlightPerApp = 3
            $0.timeout = 60
        }) { server, hooks in
            let (ann, bob, cy) = (try await server.http.anonymousLogin(), try await server.http.anonymousLogin(), try await server.http.anonymousLogin())
            let http = server.http
            let hanging = (0..<2).map { _ in Task { try await http.callFunction("sum", bearer: ann.access_token).status } }
            #expect(await waitUntil(timeout: .seconds(60)) { hooks.hangingCalls == 2 })
            let third = try await server.http.callFunction("sum", bearer: ann.access_token)
            #expect(third.status == 429)
            #expect(third.errorCode == "TooManyRequests")
            #expect(third.retryAfter == "1")
            // Another user still has room, until the app is at its limit.
            let bobs = Task { try await http.callFunction("sum", bearer: bob.access_token).status }
            #expect(await waitUntil(timeout: .seconds(60)) { hooks.hangingCalls == 3 })
            #expect(try await server.http.callFunction("sum", bearer: cy.access_token).errorCode == "TooManyRequests")
            hooks.release()
            // The hang answers no "result": the function returned nothing, a null.
            for task in hanging { #expect(try await task.value == 200) }
            #expect(try await bobs.value == 200)
            hooks.setBehavior(FunctionAnswers.standard)
            #expect(try await server.http.callFunction("sum", argumentsJSON: "[4]", bearer: cy.access_token).status == 200)
        }
    }

    @Test func theAuthenticationFunctionLogsUsersInByTheirExternalId() async throws {
        try await withFunctionServer { server, hooks in
            let path = HTTP.loginPath(app: "tasks", provider: "custom-function")
            let first = try await server.http.send("POST", path, body: #"{"username": "bob", "pin": {"$numberInt": "1234"}, "options": {"device": {}}}"#)
            #expect(first.status == 200)
            let login = try first.decode(HTTP.Login.self)
            let call = try #require(hooks.calls.last)
            #expect(call.json["purpose"] as? String == "authenticate")
            let payload = try #require(call.json["payload"] as? [String: Any])
            #expect(payload["options"] == nil)
            #expect((payload["pin"] as? [String: String]) == ["$numberInt": "1234"])
            let again = try await server.http.send("POST", path, body: #"{"username": "bob"}"#).decode(HTTP.Login.self)
            #expect(again.user_id == login.user_id)
            let profile = try await server.http.profile(login.access_token).object
            #expect((profile["identities"] as? [[String: Any]])?.first?["id"] as? String == "ext-bob")
            let refused = try await server.http.send("POST", path, body: #"{"username": "mallory"}"#)
            #expect(refused.status == 401)
            #expect(refused.errorCode == "InvalidCredentials")
            #expect(try await server.http.send("POST", path, body: "{}").errorCode == "InvalidCredentials")
            let deep = String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000)
            #expect(try await server.http.send("POST", path, body: #"{"x": \#(deep)}"#).errorCode == "BadRequest")
            hooks.setBehavior(.respond { _ in #"{"id": ""}"# })
            #expect(try await server.http.send("POST", path, body: #"{"username": "eve"}"#).errorCode == "InvalidCredentials")
        }
    }

    @Test func theAuthenticationProviderIsOffWithoutAWebhook() async throws {
        try await withFunctionServer(settings: { $0.authenticationURL = nil }) { server, hooks in
            let answer = try await server.http.send("POST", HTTP.loginPath(app: "tasks", provider: "custom-function"), body: #"{"username": "bob"}"#)
            #expect(answer.errorCode == "AuthProviderDisabled")
            #expect(hooks.calls.isEmpty)
        }
    }

    @Test func theConfigurationIsChecked() throws {
        func invalid(_ json: String) -> String? {
            let data = Data(#"{"apps": [{"id": "a", "functions": \#(json)}]}"#.utf8)
            do {
                try JSONDecoder().decode(ServerConfiguration.self, from: data).validate()
                return nil
            } catch let error as ConfigurationError { return error.field } catch { return "\(error)" }
        }
        #expect(invalid(#"{"definitions": {"sum": {"url": "http://127.0.0.1:1/sum", "private": true, "runAsSystem": true}}}"#) == nil)
        #expect(invalid(#"{"definitions": {"sum": {"url": "ftp://x"}}}"#) == "apps[0].functions.definitions.sum.url")
        #expect(invalid(#"{"definitions": {"a b": {"url": "http://x"}}}"#) == "apps[0].functions.definitions")
        #expect(invalid(#"{"webhookSecret": "short"}"#) == "apps[0].functions.webhookSecret")
        #expect(invalid(#"{"timeout": 0}"#) == "apps[0].functions.timeout")
        #expect(invalid(#"{"maxAnswerBytes": 0}"#) == "apps[0].functions.maxAnswerBytes")
        #expect(invalid(#"{"callsInFlightPerUser": 9, "callsInFlightPerApp": 3}"#) == "apps[0].functions.callsInFlightPerUser")
        #expect(invalid(#"{"authenticationURL": "nowhere"}"#) == "apps[0].functions.authenticationURL")
    }
}
}
