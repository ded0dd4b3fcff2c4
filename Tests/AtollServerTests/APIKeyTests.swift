import AtollServer
import Foundation
import Testing

@Suite("User API keys")
struct APIKeyTests {
    @Test func anAPIKeyIsCreatedListedDisabledEnabledAndDeleted() async throws {
        try await withServer { server in
            let owner = try await server.http.anonymousLogin()
            let created = try await server.http.post(
                "/api/client/v1/auth/api_keys", bearer: owner.refresh_token, json: ["name": "ci"])
            #expect(created.status == 201)
            let id = try #require(created.object["_id"] as? String)
            let key = try #require(created.object["key"] as? String)
            #expect(created.object["name"] as? String == "ci")
            #expect(created.object["disabled"] as? Bool == false)

            // Logging in with the key is logging in as its owner.
            let login = try await server.http.logIn(provider: "api-key", json: ["key": key])
            #expect(login.status == 200)
            #expect(try login.decode(HTTP.Login.self).user_id == owner.user_id)

            let list = try await server.http.send("GET", "/api/client/v1/auth/api_keys", bearer: owner.refresh_token)
            #expect(list.status == 200)
            let keys = try #require(try JSONSerialization.jsonObject(with: list.body) as? [[String: Any]])
            #expect(keys.count == 1)
            #expect(keys.first?["_id"] as? String == id)
            #expect(keys.first?["key"] == nil)
            #expect(!list.text.contains(key))

            let one = try await server.http.send("GET", "/api/client/v1/auth/api_keys/\(id)", bearer: owner.refresh_token)
            #expect(one.status == 200)
            #expect(one.object["name"] as? String == "ci")
            #expect(one.object["key"] == nil)

            let disable = try await server.http.send(
                "PUT", "/api/client/v1/auth/api_keys/\(id)/disable", bearer: owner.refresh_token)
            #expect(disable.status == 204)
            let refused = try await server.http.logIn(provider: "api-key", json: ["key": key])
            #expect(refused.status == 401)
            #expect(refused.errorCode == "InvalidCredentials")
            let shown = try await server.http.send("GET", "/api/client/v1/auth/api_keys/\(id)", bearer: owner.refresh_token)
            #expect(shown.object["disabled"] as? Bool == true)

            let enable = try await server.http.send(
                "PUT", "/api/client/v1/auth/api_keys/\(id)/enable", bearer: owner.refresh_token)
            #expect(enable.status == 204)
            #expect(try await server.http.logIn(provider: "api-key", json: ["key": key]).status == 200)

            let delete = try await server.http.send("DELETE", "/api/client/v1/auth/api_keys/\(id)", bearer: owner.refresh_token)
            #expect(delete.status == 204)
            #expect(try await server.http.logIn(provider: "api-key", json: ["key": key]).errorCode == "InvalidCredentials")
            let gone = try await server.http.send("GET", "/api/client/v1/auth/api_keys/\(id)", bearer: owner.refresh_token)
            #expect(gone.status == 404)
            #expect(gone.errorCode == "APIKeyNotFound")
        }
    }

    @Test func anotherUsersKeysAreOutOfReach() async throws {
        try await withServer { server in
            let owner = try await server.http.anonymousLogin()
            let stranger = try await server.http.anonymousLogin()
            let created = try await server.http.post(
                "/api/client/v1/auth/api_keys", bearer: owner.refresh_token, json: ["name": "mine"])
            let id = try #require(created.object["_id"] as? String)
            for (method, path) in [
                ("GET", "/api/client/v1/auth/api_keys/\(id)"), ("DELETE", "/api/client/v1/auth/api_keys/\(id)"),
                ("PUT", "/api/client/v1/auth/api_keys/\(id)/disable"),
            ] {
                let answer = try await server.http.send(method, path, bearer: stranger.refresh_token)
                #expect(answer.status == 404, "\(method) \(path)")
                #expect(answer.errorCode == "APIKeyNotFound")
            }
            let list = try await server.http.send("GET", "/api/client/v1/auth/api_keys", bearer: stranger.refresh_token)
            #expect(list.text == "[]")
        }
    }

    @Test func apiKeyCallsNeedARefreshTokenAndAName() async throws {
        try await withServer { server in
            let owner = try await server.http.anonymousLogin()
            let withAccess = try await server.http.post(
                "/api/client/v1/auth/api_keys", bearer: owner.access_token, json: ["name": "x"])
            #expect(withAccess.status == 401)
            #expect(withAccess.errorCode == "InvalidToken")
            let noName = try await server.http.post("/api/client/v1/auth/api_keys", bearer: owner.refresh_token)
            #expect(noName.errorCode == "BadRequest")
            let missingKey = try await server.http.logIn(provider: "api-key")
            #expect(missingKey.errorCode == "BadRequest")
            let wrongKey = try await server.http.logIn(provider: "api-key", json: ["key": "not-a-key"])
            #expect(wrongKey.errorCode == "InvalidCredentials")
        }
    }
}
