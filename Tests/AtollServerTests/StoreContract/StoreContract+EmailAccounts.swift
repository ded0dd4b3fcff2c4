import AtollServer
import Testing

/// ``EmailAccountStore``: pending registrations, confirmation and reset tokens, password hashes.
extension StoreContract {
    static func pending(_ address: String, app: String = appID, at seconds: Int = 0) -> StoredPendingUser {
        StoredPendingUser(appID: app, email: address, passwordHash: "hash-\(address)", createdAt: at(seconds))
    }

    /// A token of `address` for `purpose`, its digest `digest-<id>`.
    static func accountToken(_ id: String, _ address: String = "ann@example.com", purpose: AccountTokenPurpose = .confirm,
                             created: Int = 0, expires: Int = 10_000) -> StoredAccountToken {
        StoredAccountToken(id: id, appID: appID, email: address, purpose: purpose, digest: "digest-\(id)", createdAt: at(created),
                           expiresAt: at(expires))
    }

    /// Takes `token` with its own digest and purpose at `now`.
    static func take(_ store: any ServerStore, _ token: StoredAccountToken, now seconds: Int = 1) async throws -> StoredAccountToken? {
        try await store.takeAccountToken(appID: token.appID, tokenID: token.id, digest: token.digest, purpose: token.purpose, now: at(seconds))
    }

    static func pendingRegistrationsAreRecordedOncePerName(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        let ann = pending("ann@example.com", at: 1)
        try await store.insertPendingUser(ann)
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == ann)
        #expect(try await store.pendingUser(appID: appID, email: "bob@example.com") == nil)
        #expect(try await store.pendingUser(appID: "other", email: "ann@example.com") == nil)

        var again = pending("ann@example.com", at: 2)
        again.passwordHash = "hash-again"
        await expectError(.duplicateIdentity, "pending already") { try await store.insertPendingUser(again) }
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == ann)

        try await store.createUser(storedUser("bob", [email("bob@example.com")]))
        await expectError(.duplicateIdentity, "a user's name") { try await store.insertPendingUser(pending("bob@example.com")) }
        #expect(try await store.pendingUser(appID: appID, email: "bob@example.com") == nil)

        // Only an e-mail/password identity takes the name.
        try await store.createUser(storedUser("carol", [custom("carol@example.com")], at: 1))
        try await store.insertPendingUser(pending("carol@example.com"))
        #expect(try await store.pendingUser(appID: appID, email: "carol@example.com") == pending("carol@example.com"))

        await expectError(.missingOwner) { try await store.insertPendingUser(pending("ann@example.com", app: "none")) }
        #expect(try await store.pendingUser(appID: "none", email: "ann@example.com") == nil)

        // A name belongs to one app.
        let elsewhere = pending("ann@example.com", app: "other", at: 3)
        try await store.insertPendingUser(elsewhere)
        #expect(try await store.pendingUser(appID: "other", email: "ann@example.com") == elsewhere)
    }

    static func deletingARegistrationForgetsItsConfirmationTokens(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.insertPendingUser(pending("ann@example.com"))
        try await store.insertPendingUser(pending("bob@example.com"))
        let annsToken = accountToken("c-ann")
        let bobsToken = accountToken("c-bob", "bob@example.com")
        try await store.insertAccountToken(annsToken, keepingAtMost: 5, now: at(0))
        try await store.insertAccountToken(bobsToken, keepingAtMost: 5, now: at(0))

        #expect(try await store.deletePendingUser(appID: appID, email: "ann@example.com"))
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == nil)
        #expect(try await take(store, annsToken) == nil, "its confirmation token went with it")
        #expect(try await store.deletePendingUser(appID: appID, email: "ann@example.com") == false)
        #expect(try await store.deletePendingUser(appID: appID, email: "nobody@example.com") == false)
        #expect(try await store.deletePendingUser(appID: "none", email: "bob@example.com") == false)

        #expect(try await store.pendingUser(appID: appID, email: "bob@example.com") == pending("bob@example.com"))
        #expect(try await take(store, bobsToken) == bobsToken, "another registration's token stays")

        // The name is free again.
        try await store.insertPendingUser(pending("ann@example.com", at: 5))
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == pending("ann@example.com", at: 5))
    }

    static func confirmingARegistrationMakesTheUser(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.insertPendingUser(pending("ann@example.com"))
        let confirmation = accountToken("c-ann")
        try await store.insertAccountToken(confirmation, keepingAtMost: 5, now: at(0))

        var ann = storedUser("ann", [email("ann@example.com")], at: 5)
        ann.email = "ann@example.com"
        var expected = ann
        expected.identities = [email("ann@example.com", password: "hash-ann@example.com")]
        #expect(try await store.confirmPendingUser(appID: appID, email: "ann@example.com", as: ann) == expected)
        #expect(try await store.user(id: "ann") == expected)
        #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: "ann@example.com") == expected)
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == nil)
        #expect(try await take(store, confirmation) == nil, "confirmation tokens go")

        // Confirmed once: a second confirmation finds nothing and makes no one.
        #expect(try await store.confirmPendingUser(appID: appID, email: "ann@example.com", as: storedUser("ann-2", [email("ann@example.com")])) == nil)
        #expect(try await store.user(id: "ann-2") == nil)
        #expect(try await store.confirmPendingUser(appID: appID, email: "never@example.com", as: storedUser("never", [email("never@example.com")])) == nil)
        #expect(try await store.user(id: "never") == nil)
        #expect(try await store.users(appID: appID) == [expected])

        // A user took the name meanwhile: refused, and the registration stays.
        try await store.insertPendingUser(pending("dora@example.com"))
        let dora = storedUser("dora", [email("dora@example.com")], at: 6)
        try await store.createUser(dora)
        await expectError(.duplicateIdentity) {
            _ = try await store.confirmPendingUser(appID: appID, email: "dora@example.com", as: storedUser("dora-2", [email("dora@example.com")], at: 7))
        }
        #expect(try await store.user(id: "dora-2") == nil)
        #expect(try await store.pendingUser(appID: appID, email: "dora@example.com") == pending("dora@example.com"))
        #expect(try await store.users(appID: appID) == [expected, dora])
    }

    static func accountTokensKeepOnlyTheNewestUnexpired(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let expiring = accountToken("expiring", created: 1, expires: 100)
        try await store.insertAccountToken(expiring, keepingAtMost: 2, now: at(1))
        // At 150 `expiring` has expired: it goes, and does not count towards the two kept.
        let a = accountToken("a", created: 20)
        let b = accountToken("b", created: 30)
        try await store.insertAccountToken(a, keepingAtMost: 2, now: at(150))
        try await store.insertAccountToken(b, keepingAtMost: 2, now: at(150))
        // Other e-mails and purposes have their own two.
        let bobs = accountToken("bob", "bob@example.com", created: 5)
        let reset = accountToken("reset", purpose: .reset, created: 6)
        try await store.insertAccountToken(bobs, keepingAtMost: 2, now: at(150))
        try await store.insertAccountToken(reset, keepingAtMost: 2, now: at(150))
        // Newest by creation, not by insertion: `c` is newer than `a`, older than `b`.
        let c = accountToken("c", created: 25)
        try await store.insertAccountToken(c, keepingAtMost: 2, now: at(150))

        #expect(try await take(store, expiring, now: 50) == nil, "expired tokens go")
        #expect(try await take(store, a, now: 160) == nil, "the oldest beyond two goes")
        #expect(try await take(store, b, now: 160) == b)
        #expect(try await take(store, c, now: 160) == c)
        #expect(try await take(store, bobs, now: 160) == bobs)
        #expect(try await take(store, reset, now: 160) == reset)
    }

    static func accountTokensAreTakenOnceWhenEverythingMatches(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let token = accountToken("t1", purpose: .reset, created: 10, expires: 100)
        try await store.insertAccountToken(token, keepingAtMost: 5, now: at(10))

        #expect(try await store.takeAccountToken(appID: appID, tokenID: "t1", digest: "digest-forged", purpose: .reset, now: at(20)) == nil)
        #expect(try await store.takeAccountToken(appID: appID, tokenID: "t1", digest: "digest-t1", purpose: .confirm, now: at(20)) == nil)
        #expect(try await store.takeAccountToken(appID: "other", tokenID: "t1", digest: "digest-t1", purpose: .reset, now: at(20)) == nil)
        #expect(try await store.takeAccountToken(appID: appID, tokenID: "t-unknown", digest: "digest-t1", purpose: .reset, now: at(20)) == nil)
        #expect(try await take(store, token, now: 20) == token, "none of the failed attempts used it up")
        #expect(try await take(store, token, now: 20) == nil, "single use")

        let expired = accountToken("t2", purpose: .reset, created: 10, expires: 100)
        try await store.insertAccountToken(expired, keepingAtMost: 5, now: at(10))
        #expect(try await take(store, expired, now: 100) == nil, "expired at its expiry")
        #expect(try await take(store, expired, now: 500) == nil)

        let fresh = accountToken("t3", purpose: .confirm, created: 10, expires: 100)
        try await store.insertAccountToken(fresh, keepingAtMost: 5, now: at(10))
        #expect(try await take(store, fresh, now: 99) == fresh)
    }

    static func accountTokensAreDeletedPerPurpose(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let confirmations = [accountToken("c1", created: 1), accountToken("c2", created: 2)]
        let reset = accountToken("r1", purpose: .reset, created: 3)
        let bobs = accountToken("c-bob", "bob@example.com", created: 4)
        for token in confirmations + [reset, bobs] { try await store.insertAccountToken(token, keepingAtMost: 5, now: at(5)) }

        try await store.deleteAccountTokens(appID: appID, email: "ann@example.com", purpose: .confirm)
        for token in confirmations { #expect(try await take(store, token, now: 6) == nil) }
        #expect(try await take(store, reset, now: 6) == reset)
        #expect(try await take(store, bobs, now: 6) == bobs)
        try await store.deleteAccountTokens(appID: appID, email: "nobody@example.com", purpose: .reset)
    }

    static func passwordHashesAreReplaced(_ store: any ServerStore) async throws {
        try await makeApp(store)
        var ann = storedUser("ann", [email("ann@example.com", password: "hash-old"), email("ann@work.example", password: "hash-work")])
        ann.email = "ann@example.com"
        let anon = storedUser("anon", [anonymous("a-1")], at: 1)
        try await store.createUser(ann)
        try await store.createUser(anon)

        // One identity's password: the user's other e-mail identity keeps its own.
        #expect(try await store.setPasswordHash(appID: appID, email: "ann@example.com", "hash-new"))
        ann.identities[0].passwordHash = "hash-new"
        #expect(try await store.user(id: "ann") == ann)
        #expect(try await store.user(id: "anon") == anon)
        #expect(try await store.setPasswordHash(appID: appID, email: "a-1", "hash") == false, "not an e-mail identity")
        #expect(try await store.setPasswordHash(appID: "other", email: "ann@example.com", "hash") == false, "another app")
        #expect(try await store.setPasswordHash(appID: appID, email: "nobody@example.com", "hash") == false)
        #expect(try await store.user(id: "ann") == ann)
        #expect(try await store.user(id: "anon") == anon)
    }

    static func expiredRegistrationsFreeTheirName(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await store.insertPendingUser(pending("ann@example.com", at: 10))
        try await store.insertPendingUser(pending("bob@example.com", at: 50))
        let annToken = accountToken("c-ann", created: 10, expires: 10_000)
        try await store.insertAccountToken(annToken, keepingAtMost: 5, now: at(10))

        // At 60, registrations made before 30 have expired: Ann's name is free, Bob's is not.
        await expectError(.duplicateIdentity, "unexpired") {
            try await store.insertPendingUser(pending("bob@example.com", at: 60), expiredBefore: at(30))
        }
        var again = pending("ann@example.com", at: 60)
        again.passwordHash = "hash-again"
        try await store.insertPendingUser(again, expiredBefore: at(30))
        #expect(try await store.pendingUser(appID: appID, email: "ann@example.com") == again)
        #expect(try await take(store, annToken) == nil, "the expired registration's tokens went with it")
        #expect(try await store.pendingUser(appID: appID, email: "bob@example.com") == pending("bob@example.com", at: 50))

        // A confirmation confirms only a registration made within its window: not one made after
        // the token (Ann's new one, at 60, by a token of 40), nor an expired one.
        let ann = storedUser("ann", [email("ann@example.com")], at: 70)
        #expect(try await store.confirmPendingUser(appID: appID, email: "ann@example.com", as: ann, registered: at(30)...at(40)) == nil)
        let bob = storedUser("bob", [email("bob@example.com")], at: 70)
        #expect(try await store.confirmPendingUser(appID: appID, email: "bob@example.com", as: bob, registered: at(55)...at(70)) == nil)
        #expect(try await store.users(appID: appID) == [])
        var confirmed = ann
        confirmed.identities = [email("ann@example.com", password: "hash-again")]
        #expect(try await store.confirmPendingUser(appID: appID, email: "ann@example.com", as: ann, registered: at(30)...at(60)) == confirmed)
        #expect(try await store.user(appID: appID, providerType: "local-userpass", identityID: "ann@example.com") == confirmed)
    }
}
