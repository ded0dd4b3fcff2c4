import AtollServer
import Testing

/// Users and their identities: creation, lookup, listing, disabling, deletion.
extension StoreContract {
    static func usersAreRecordedWithTheirIdentities(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        var late = storedUser("u-late", [custom("sub-9"), email("ann@example.com", password: "pbkdf2-ann"), anonymous("a-1")], at: 20)
        late.email = "ann@example.com"
        late.name = "Ann"
        let early = storedUser("u-early", [anonymous("a-2")], at: 10)
        let tieB = storedUser("u-b", [anonymous("a-3")], at: 30)
        var tieA = storedUser("u-a", [anonymous("a-4")], at: 30)
        tieA.disabled = true
        // Identities belong to one app: the same one in another app is another user's.
        let elsewhere = storedUser("u-other", [custom("sub-9")], app: "other", at: 5)
        for user in [late, early, tieB, tieA, elsewhere] { try await store.createUser(user) }

        #expect(try await store.user(id: "u-late") == late)
        #expect(try await store.user(id: "u-a") == tieA)
        #expect(try await store.user(id: "u-other") == elsewhere)
        #expect(try await store.user(id: "nobody") == nil)

        // Oldest first; users made in the same instant by id.
        #expect(try await store.users(appID: appID) == [early, late, tieA, tieB])
        #expect(try await store.users(appID: "other") == [elsewhere])
        #expect(try await store.users(appID: "none") == [])

        #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: "ann@example.com") == late)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-9") == late)
        #expect(try await store.user(appID: appID, providerType: "anon-user", identityID: "a-1") == late)
        #expect(try await store.user(appID: "other", providerType: "custom-token", identityID: "sub-9") == elsewhere)
        #expect(try await store.user(appID: appID, providerType: "anon-user", identityID: "sub-9") == nil, "another provider")
        #expect(try await store.user(appID: "none", providerType: "custom-token", identityID: "sub-9") == nil)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-8") == nil)
    }

    static func userMetadataIsKeptAndReplaced(_ store: any ServerStore) async throws {
        try await makeApp(store)
        var user = storedUser("u1", [custom("sub-1")])
        user.metadata = ["department": .string("sales"), "groups": .array([.string("blue"), .int(2)]), "org": .object(["level": .double(1.5)])]
        try await store.createUser(user)
        #expect(try await store.user(id: "u1") == user)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-1")?.metadata == user.metadata)
        #expect(try await store.setUserMetadata(id: "u1", ["department": .string("ops")]))
        #expect(try await store.user(id: "u1")?.metadata == ["department": .string("ops")])
        #expect(try await store.setUserMetadata(id: "u1", [:]))
        #expect(try await store.user(id: "u1")?.metadata == [:])
        #expect(try await store.setUserMetadata(id: "nobody", ["a": .null]) == false)
        // A user made without metadata has none.
        try await store.createUser(storedUser("u2", [anonymous("a-1")]))
        #expect(try await store.user(id: "u2")?.metadata == [:])
    }

    static func createUserRefusesAMissingApp(_ store: any ServerStore) async throws {
        try await makeApp(store)
        await expectError(.missingOwner) { try await store.createUser(storedUser("u1", [anonymous("a-1")], app: "none")) }
        #expect(try await store.user(id: "u1") == nil)
        #expect(try await store.user(appID: "none", providerType: "anon-user", identityID: "a-1") == nil)
        #expect(try await store.users(appID: "none") == [])
    }

    static func createUserRefusesATakenIdentityAndWritesNothing(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let owner = storedUser("owner", [custom("sub-1")])
        try await store.createUser(owner)

        // The free identity comes first: it must not stay behind either.
        await expectError(.duplicateIdentity) {
            try await store.createUser(storedUser("intruder", [anonymous("a-9"), custom("sub-1")], at: 1))
        }
        #expect(try await store.user(id: "intruder") == nil)
        #expect(try await store.user(appID: appID, providerType: "anon-user", identityID: "a-9") == nil)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-1") == owner)
        #expect(try await store.users(appID: appID) == [owner])

        // Nothing of it was written, so the same user without the taken identity is recorded.
        let intruder = storedUser("intruder", [anonymous("a-9")], at: 1)
        try await store.createUser(intruder)
        #expect(try await store.users(appID: appID) == [owner, intruder])
    }

    static func usersAreDisabledAndEnabled(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let user = storedUser("u1", [anonymous("a-1")])
        let other = storedUser("u2", [anonymous("a-2")], at: 1)
        try await store.createUser(user)
        try await store.createUser(other)

        #expect(try await store.setUserDisabled(id: "u1", disabled: true))
        var disabled = user
        disabled.disabled = true
        #expect(try await store.user(id: "u1") == disabled)
        #expect(try await store.user(appID: appID, providerType: "anon-user", identityID: "a-1") == disabled)
        #expect(try await store.user(id: "u2") == other)

        #expect(try await store.setUserDisabled(id: "u1", disabled: false))
        #expect(try await store.user(id: "u1") == user)
        #expect(try await store.setUserDisabled(id: "nobody", disabled: true) == false)
        #expect(try await store.user(id: "nobody") == nil)
    }

    static func deletingAUserRemovesItsIdentitiesTokensAndKeys(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let user = storedUser("u1", [anonymous("a-1"), custom("sub-1")])
        let other = storedUser("u2", [anonymous("a-2")], at: 1)
        try await store.createUser(user)
        try await store.createUser(other)
        try await store.insertRefreshToken(refreshToken("rt-1", of: "u1"))
        try await store.insertRefreshToken(refreshToken("rt-1b", of: "u1", at: 1))
        try await store.insertRefreshToken(refreshToken("rt-2", of: "u2"))
        try await store.insertAPIKey(apiKey("k1", of: "u1"))
        try await store.insertAPIKey(apiKey("k2", of: "u2"))

        #expect(try await store.deleteUser(id: "u1"))
        #expect(try await store.user(id: "u1") == nil)
        #expect(try await store.user(appID: appID, providerType: "anon-user", identityID: "a-1") == nil)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-1") == nil)
        #expect(try await store.refreshToken(digest: "rt-1") == nil)
        #expect(try await store.refreshToken(digest: "rt-1b") == nil)
        #expect(try await store.apiKey(appID: appID, digest: "digest-k1") == nil)
        #expect(try await store.apiKey(id: "k1", userID: "u1") == nil)
        #expect(try await store.apiKeys(userID: "u1") == [])
        #expect(try await store.users(appID: appID) == [other])

        // The other user keeps everything.
        #expect(try await store.user(id: "u2") == other)
        #expect(try await store.refreshToken(digest: "rt-2") == refreshToken("rt-2", of: "u2"))
        #expect(try await store.apiKey(appID: appID, digest: "digest-k2") == apiKey("k2", of: "u2"))

        #expect(try await store.deleteUser(id: "u1") == false)
        #expect(try await store.deleteUser(id: "nobody") == false)

        // The identities are free again.
        let successor = storedUser("u3", [custom("sub-1")], at: 2)
        try await store.createUser(successor)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-1") == successor)
    }
}
