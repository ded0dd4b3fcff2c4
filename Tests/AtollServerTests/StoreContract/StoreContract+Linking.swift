import AtollServer
import Testing

/// `addIdentity(_:toUser:absorbing:)`: linking an identity to a user, absorbing an unused account.
extension StoreContract {
    static func addIdentityAppendsAfterTheUsersIdentities(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let user = storedUser("u1", [anonymous("a-1")])
        let other = storedUser("u2", [anonymous("a-2")], at: 1)
        try await store.createUser(user)
        try await store.createUser(other)

        var expected = user
        expected.identities = [anonymous("a-1"), custom("sub-1")]
        #expect(try await store.addIdentity(custom("sub-1"), toUser: "u1", absorbing: nil) == expected)
        expected.identities.append(email("u1@example.com"))
        #expect(try await store.addIdentity(email("u1@example.com"), toUser: "u1", absorbing: nil) == expected)

        #expect(try await store.user(id: "u1") == expected)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-1") == expected)
        #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: "u1@example.com") == expected)
        #expect(try await store.users(appID: appID) == [expected, other])
    }

    static func addIdentityAbsorbsAnAccountNeverUsed(_ store: any ServerStore) async throws {
        try await makeApp(store)
        // An anonymous user links the e-mail account it registered but never logged in with.
        let anon = storedUser("anon", [anonymous("a-1")], at: 1)
        var registered = storedUser("registered", [email("ann@example.com", password: "hash-ann")], at: 2)
        registered.email = "ann@example.com"
        try await store.createUser(anon)
        try await store.createUser(registered)

        var expected = anon
        expected.identities = [anonymous("a-1"), email("ann@example.com", password: "hash-ann")]
        expected.email = "ann@example.com"
        #expect(try await store.addIdentity(email("ann@example.com"), toUser: "anon", absorbing: "registered") == expected)
        #expect(try await store.user(id: "anon") == expected)
        #expect(try await store.user(id: "registered") == nil)
        #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: "ann@example.com") == expected)
        #expect(try await store.users(appID: appID) == [expected])

        // A user with an e-mail keeps it, and its own e-mail identity keeps its own password: the
        // absorbed identity brings its password along and changes no other.
        var named = storedUser("named", [custom("sub-1"), email("bob@work.example", password: "hash-old")], at: 3)
        named.email = "bob@work.example"
        named.name = "Bob"
        var bob = storedUser("bob", [email("bob@example.com", password: "hash-bob")], at: 4)
        bob.email = "bob@example.com"
        try await store.createUser(named)
        try await store.createUser(bob)

        var linked = named
        linked.identities = [custom("sub-1"), email("bob@work.example", password: "hash-old"), email("bob@example.com", password: "hash-bob")]
        #expect(try await store.addIdentity(email("bob@example.com"), toUser: "named", absorbing: "bob") == linked)
        #expect(try await store.user(id: "named") == linked)
        #expect(try await store.user(id: "bob") == nil)
    }

    static func addIdentityRefusesToAbsorbAnAccountInUse(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let me = storedUser("me", [anonymous("a-me")])
        try await store.createUser(me)

        /// A registered account `id` (its only identity the e-mail `id@example.com`), then `use` of it.
        func registered(_ id: String, also extra: [StoredIdentity] = [], disabled: Bool = false,
                        _ use: () async throws -> Void = {}) async throws -> StoredUser {
            var user = storedUser(id, [email("\(id)@example.com", password: "hash-\(id)")] + extra, at: 1)
            user.disabled = disabled
            try await store.createUser(user)
            try await use()
            return user
        }
        /// Links `user`'s e-mail to `me`, absorbing `absorbing`: refused, and nothing changed.
        func expectRefused(_ user: StoredUser, absorbing: String?, _ comment: Comment,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
            await expectError(.duplicateIdentity, comment, sourceLocation: sourceLocation) {
                _ = try await store.addIdentity(user.identities[0], toUser: "me", absorbing: absorbing)
            }
            #expect(try await store.user(id: user.id) == user, comment, sourceLocation: sourceLocation)
            #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: user.identities[0].id) == user,
                    comment, sourceLocation: sourceLocation)
            #expect(try await store.user(id: "me") == me, comment, sourceLocation: sourceLocation)
        }

        let loggedIn = try await registered("session") {
            try await store.insertRefreshToken(refreshToken("rt-session", of: "session"))
            #expect(try await store.revokeRefreshToken(digest: "rt-session"))
        }
        try await expectRefused(loggedIn, absorbing: "session", "a refresh token (even revoked) is a login")

        let keyed = try await registered("keyed") { try await store.insertAPIKey(apiKey("k1", of: "keyed")) }
        try await expectRefused(keyed, absorbing: "keyed", "an API key is a login")

        let synced = try await registered("synced") {
            _ = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1), userID: "synced", maxPerUser: nil)
        }
        try await expectRefused(synced, absorbing: "synced", "a sync client file is a login")

        let twoWays = try await registered("two-ways", also: [custom("sub-two-ways")])
        try await expectRefused(twoWays, absorbing: "two-ways", "an account with another identity")

        let disabled = try await registered("disabled", disabled: true)
        try await expectRefused(disabled, absorbing: "disabled", "a disabled account")

        let unused = try await registered("unused")
        let bystander = try await registered("bystander")
        try await expectRefused(unused, absorbing: nil, "absorbing no one")
        try await expectRefused(unused, absorbing: "bystander", "absorbing another user than the identity's")
        #expect(try await store.user(id: "bystander") == bystander)

        // The same account, named, is absorbed.
        var expected = me
        expected.identities = [anonymous("a-me"), email("unused@example.com", password: "hash-unused")]
        #expect(try await store.addIdentity(email("unused@example.com"), toUser: "me", absorbing: "unused") == expected)
    }

    static func addIdentityRefusesOwnedIdentitiesAndUnknownUsers(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        let me = storedUser("me", [anonymous("a-me"), custom("sub-me")])
        try await store.createUser(me)

        await expectError(.duplicateIdentity, "the user's own identity") {
            _ = try await store.addIdentity(custom("sub-me"), toUser: "me", absorbing: nil)
        }
        await expectError(.duplicateIdentity, "absorbing itself") {
            _ = try await store.addIdentity(custom("sub-me"), toUser: "me", absorbing: "me")
        }
        #expect(try await store.user(id: "me") == me)

        await expectError(.notFound) { _ = try await store.addIdentity(custom("sub-x"), toUser: "nobody", absorbing: nil) }
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "sub-x") == nil)

        // An identity of another app's user is another identity.
        let foreign = storedUser("foreign", [custom("shared")], app: "other")
        try await store.createUser(foreign)
        var expected = me
        expected.identities.append(custom("shared"))
        #expect(try await store.addIdentity(custom("shared"), toUser: "me", absorbing: nil) == expected)
        #expect(try await store.user(appID: "other", providerType: "custom-token", identityID: "shared") == foreign)
        #expect(try await store.user(appID: appID, providerType: "custom-token", identityID: "shared") == expected)
    }
}
