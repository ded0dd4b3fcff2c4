import Foundation

/// What e-mail/password confirmation and reset keep: registrations waiting for confirmation and the
/// single-use tokens that confirm them or reset a password. Part of every ``ServerStore``.
///
/// Tokens are kept as SHA-256 digests; a token is taken (deleted) by the one request that uses it.
package protocol EmailAccountStore: Sendable {
    /// Records a registration waiting for confirmation. First, in the same transaction, the app's
    /// registrations made before `expiredBefore` are forgotten with their confirmation tokens:
    /// an expired registration frees its name, and no token made for it confirms the new one.
    /// - Throws: `ServerStoreError.duplicateIdentity` when the name is registered already (a user
    ///   or another unexpired pending registration), `.missingOwner` when there is no such app.
    func insertPendingUser(_ user: StoredPendingUser, expiredBefore: Date) async throws
    /// The pending registration of `email` in `appID`, or nil.
    func pendingUser(appID: String, email: String) async throws -> StoredPendingUser?
    /// Forgets a pending registration and its tokens. False when there was none.
    @discardableResult
    func deletePendingUser(appID: String, email: String) async throws -> Bool
    /// Turns the pending registration of `email` into `user` (whose e-mail identity is `email`
    /// and gets the registration's password hash), in one transaction, and forgets its
    /// confirmation tokens. Only a registration made within `registered` is confirmed (not an
    /// expired one, nor one made after the confirming token: that token was made for a registration
    /// since replaced). Nil when there is none (confirmed meanwhile, expired, replaced, or never made).
    /// - Throws: `ServerStoreError.duplicateIdentity` when a user has the name.
    func confirmPendingUser(appID: String, email: String, as user: StoredUser, registered: ClosedRange<Date>) async throws
        -> StoredUser?

    /// Records a token, then keeps only the newest `keepingAtMost` unexpired tokens of its
    /// (app, e-mail, purpose).
    func insertAccountToken(_ token: StoredAccountToken, keepingAtMost: Int, now: Date) async throws
    /// Takes the token `tokenID` when its digest and purpose match and it has not expired at `now`:
    /// deletes it and returns it. Nil otherwise (unknown, used, expired, forged or of another purpose).
    func takeAccountToken(appID: String, tokenID: String, digest: String, purpose: AccountTokenPurpose, now: Date) async throws
        -> StoredAccountToken?
    /// Forgets the tokens of one (app, e-mail, purpose).
    func deleteAccountTokens(appID: String, email: String, purpose: AccountTokenPurpose) async throws

    /// Replaces the password hash of the e-mail identity `email` of `appID` (no other identity's,
    /// even of the same user). False when there is no such identity.
    @discardableResult
    func setPasswordHash(appID: String, email: String, _ hash: String) async throws -> Bool
}

extension EmailAccountStore {
    /// Records a registration, forgetting none.
    package func insertPendingUser(_ user: StoredPendingUser) async throws {
        try await insertPendingUser(user, expiredBefore: .distantPast)
    }

    /// Confirms the registration of `email`, whenever it was made.
    package func confirmPendingUser(appID: String, email: String, as user: StoredUser) async throws -> StoredUser? {
        try await confirmPendingUser(appID: appID, email: email, as: user, registered: Date.distantPast...Date.distantFuture)
    }
}

extension StoredUser {
    /// The user a confirmed registration makes: of `appID`, its e-mail identity `email` with the
    /// registration's password hash.
    func withPendingPassword(_ hash: String, of email: String, appID: String) -> StoredUser {
        var user = self
        user.appID = appID
        user.identities = identities.map { identity in
            var identity = identity
            if identity.providerType == AuthProvider.emailPassword.rawValue, identity.id == email { identity.passwordHash = hash }
            return identity
        }
        return user
    }
}

/// An e-mail/password registration waiting for confirmation.
package struct StoredPendingUser: Sendable, Hashable {
    package var appID: String
    /// The normalized user name (the e-mail identity's id).
    package var email: String
    package var passwordHash: String
    package var createdAt: Date

    package init(appID: String, email: String, passwordHash: String, createdAt: Date) {
        self.appID = appID
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }
}

/// What a confirmation or reset token is for.
package enum AccountTokenPurpose: String, Sendable, Hashable {
    case confirm
    case reset
}

/// A confirmation or reset token: its id in clear (the `tokenId` the app passes back), the token
/// as its SHA-256 digest.
package struct StoredAccountToken: Sendable, Hashable {
    package var id: String
    package var appID: String
    package var email: String
    package var purpose: AccountTokenPurpose
    /// Hex SHA-256 of the token.
    package var digest: String
    package var createdAt: Date
    package var expiresAt: Date

    package init(id: String, appID: String, email: String, purpose: AccountTokenPurpose, digest: String, createdAt: Date,
                expiresAt: Date) {
        self.id = id
        self.appID = appID
        self.email = email
        self.purpose = purpose
        self.digest = digest
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
