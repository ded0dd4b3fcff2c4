import AtollServer
import Testing

/// Refresh tokens and API keys, kept by digest.
extension StoreContract {
    static func refreshTokensAreRevokedOnce(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.createUser(storedUser("u1", [anonymous("a-1")]))
        try await store.createUser(storedUser("u2", [anonymous("a-2")], at: 1))
        let first = refreshToken("rt-1", of: "u1", at: 1)
        let second = refreshToken("rt-2", of: "u1", at: 2)
        let others = refreshToken("rt-3", of: "u2", at: 3)
        var revokedAlready = refreshToken("rt-4", of: "u2", at: 4)
        revokedAlready.revoked = true
        for token in [first, second, others, revokedAlready] { try await store.insertRefreshToken(token) }

        #expect(try await store.refreshToken(digest: "rt-1") == first)
        #expect(try await store.refreshToken(digest: "rt-4") == revokedAlready)
        #expect(try await store.refreshToken(digest: "rt-unknown") == nil)

        #expect(try await store.revokeRefreshToken(digest: "rt-1"))
        #expect(try await store.revokeRefreshToken(digest: "rt-1") == false, "revoked already")
        #expect(try await store.revokeRefreshToken(digest: "rt-4") == false, "inserted revoked")
        #expect(try await store.revokeRefreshToken(digest: "rt-unknown") == false)
        var revoked = first
        revoked.revoked = true
        #expect(try await store.refreshToken(digest: "rt-1") == revoked, "a revoked token is still found")
        #expect(try await store.refreshToken(digest: "rt-2") == second)

        try await store.revokeRefreshTokens(userID: "u1")
        #expect(try await store.refreshToken(digest: "rt-2")?.revoked == true)
        #expect(try await store.refreshToken(digest: "rt-1")?.revoked == true)
        #expect(try await store.refreshToken(digest: "rt-3") == others, "another user's token stays")
        try await store.revokeRefreshTokens(userID: "nobody")
        #expect(try await store.refreshToken(digest: "rt-3") == others)
    }

    static func apiKeysAreListedFoundDisabledAndDeleted(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.createUser(storedUser("u1", [anonymous("a-1")]))
        try await store.createUser(storedUser("u2", [anonymous("a-2")], at: 1))
        let second = apiKey("k2", of: "u1", at: 2)
        let first = apiKey("k1", of: "u1", at: 1)
        var third = apiKey("k3", of: "u1", at: 3)
        third.disabled = true
        let others = apiKey("k4", of: "u2", at: 0)
        for key in [second, first, third, others] { try await store.insertAPIKey(key) }

        #expect(try await store.apiKeys(userID: "u1") == [first, second, third], "oldest first")
        #expect(try await store.apiKeys(userID: "u2") == [others])
        #expect(try await store.apiKeys(userID: "nobody") == [])

        #expect(try await store.apiKey(id: "k1", userID: "u1") == first)
        #expect(try await store.apiKey(id: "k1", userID: "u2") == nil, "another user's key")
        #expect(try await store.apiKey(id: "nope", userID: "u1") == nil)
        #expect(try await store.apiKey(appID: appID, digest: "digest-k4") == others)
        #expect(try await store.apiKey(appID: appID, digest: "digest-k3") == third)
        #expect(try await store.apiKey(appID: "other", digest: "digest-k4") == nil, "another app")
        #expect(try await store.apiKey(appID: appID, digest: "digest-nope") == nil)

        #expect(try await store.setAPIKeyDisabled(id: "k1", userID: "u1", disabled: true))
        #expect(try await store.apiKey(id: "k1", userID: "u1")?.disabled == true)
        #expect(try await store.apiKey(appID: appID, digest: "digest-k1")?.disabled == true)
        #expect(try await store.setAPIKeyDisabled(id: "k1", userID: "u1", disabled: false))
        #expect(try await store.apiKey(id: "k1", userID: "u1") == first)
        #expect(try await store.setAPIKeyDisabled(id: "k3", userID: "u1", disabled: false))
        #expect(try await store.apiKey(id: "k3", userID: "u1")?.disabled == false)
        #expect(try await store.setAPIKeyDisabled(id: "k1", userID: "u2", disabled: true) == false, "another user's key")
        #expect(try await store.apiKey(id: "k1", userID: "u1")?.disabled == false)
        #expect(try await store.setAPIKeyDisabled(id: "nope", userID: "u1", disabled: true) == false)

        #expect(try await store.deleteAPIKey(id: "k1", userID: "u2") == false, "another user's key")
        #expect(try await store.deleteAPIKey(id: "k1", userID: "u1"))
        #expect(try await store.deleteAPIKey(id: "k1", userID: "u1") == false)
        #expect(try await store.deleteAPIKey(id: "nope", userID: "u1") == false)
        #expect(try await store.apiKeys(userID: "u1").map(\.id) == ["k2", "k3"])
        #expect(try await store.apiKey(appID: appID, digest: "digest-k1") == nil)
        #expect(try await store.apiKey(id: "k1", userID: "u1") == nil)
        #expect(try await store.apiKeys(userID: "u2") == [others])
    }
}

/// Logins: the API key a refresh token came from, and which logins are live.
extension StoreContract {
    static func apiKeyLoginsAreRevokedWithTheirKey(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.createUser(storedUser("u1", [anonymous("a-1")]))
        try await store.insertAPIKey(apiKey("k1", of: "u1"))
        try await store.insertAPIKey(apiKey("k2", of: "u1"))
        var keyLogin = refreshToken("rt-key-1", of: "u1", at: 1)
        keyLogin.apiKeyID = "k1"
        var keyLoginOut = refreshToken("rt-key-2", of: "u1", at: 2)
        keyLoginOut.apiKeyID = "k1"
        keyLoginOut.revoked = true
        var otherKey = refreshToken("rt-key-3", of: "u1", at: 3)
        otherKey.apiKeyID = "k2"
        let password = refreshToken("rt-password", of: "u1", at: 4)
        for token in [keyLogin, keyLoginOut, otherKey, password] { try await store.insertRefreshToken(token) }
        #expect(try await store.refreshToken(digest: "rt-key-1") == keyLogin, "the key is kept")

        // Only the key's logins still live are revoked, and named by device.
        #expect(try await store.revokeRefreshTokens(apiKeyID: "k1") == ["device-rt-key-1"])
        #expect(try await store.revokeRefreshTokens(apiKeyID: "k1") == [], "revoked already")
        #expect(try await store.revokeRefreshTokens(apiKeyID: "unknown") == [])
        #expect(try await store.refreshToken(digest: "rt-key-1")?.revoked == true)
        #expect(try await store.refreshToken(digest: "rt-key-3") == otherKey)
        #expect(try await store.refreshToken(digest: "rt-password") == password)
    }

    static func liveDevicesAreUnrevokedLoginsOfEnabledUsersAndKeys(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.createUser(storedUser("u1", [anonymous("a-1")]))
        try await store.createUser(storedUser("u2", [anonymous("a-2")], at: 1))
        try await store.insertAPIKey(apiKey("k1", of: "u1"))
        try await store.insertAPIKey(apiKey("k2", of: "u1"))
        var keyLogin = refreshToken("key", of: "u1")
        keyLogin.apiKeyID = "k1"
        var deletedKeyLogin = refreshToken("deleted-key", of: "u1")
        deletedKeyLogin.apiKeyID = "k2"
        var expired = refreshToken("expired", of: "u1")
        expired.expiresAt = at(-1)
        var loggedOut = refreshToken("out", of: "u1")
        loggedOut.revoked = true
        for token in [refreshToken("live", of: "u1"), expired, loggedOut, keyLogin, deletedKeyLogin, refreshToken("disabled", of: "u2")] {
            try await store.insertRefreshToken(token)
        }
        try await store.setUserDisabled(id: "u2", disabled: true)
        #expect(try await store.deleteAPIKey(id: "k2", userID: "u1"))

        let asked = ["live", "expired", "out", "key", "deleted-key", "disabled", "unknown"].map { "device-\($0)" }
        #expect(try await store.liveDevices(asked) == ["device-live", "device-expired", "device-key"])
        #expect(try await store.liveDevices([]) == [])
        // Many at once (stores read them in bounded statements).
        let many = (0..<1_500).map { "device-x\($0)" } + ["device-live"]
        #expect(try await store.liveDevices(many) == ["device-live"])

        #expect(try await store.setAPIKeyDisabled(id: "k1", userID: "u1", disabled: true))
        #expect(try await store.liveDevices(asked) == ["device-live", "device-expired"], "a disabled key's logins are not live")
        try await store.deleteUser(id: "u1")
        #expect(try await store.liveDevices(asked) == [])
    }
}
