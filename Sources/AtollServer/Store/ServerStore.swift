import AtollCore
import Foundation

/// The one storage seam of the server: apps, users and their identities, refresh tokens and API keys.
///
/// `SQLiteServerStore` is the embedded default; a PostgreSQL store implements the same protocol so that
/// several server nodes can share one database. Secrets never reach the store in clear: refresh tokens and
/// API keys are stored as SHA-256 digests, passwords as PBKDF2 hashes (see ``PasswordHasher``).
///
/// ```swift
/// let store = try SQLiteServerStore(path: "atoll-data/atoll.sqlite")
/// try await store.createApp(StoredApp(id: "tasks", createdAt: .now))
/// ```
package protocol ServerStore: EmailAccountStore, Sendable {
    // MARK: Apps

    /// The app with this id, or nil.
    func app(id: String) async throws -> StoredApp?
    /// Records an app; does nothing when an app with this id exists.
    func createApp(_ app: StoredApp) async throws
    /// Every app, by id.
    func apps() async throws -> [StoredApp]
    /// Turns sync on or off for an app; false when there is no such app.
    func setSyncEnabled(appID: String, _ enabled: Bool) async throws -> Bool
    /// The realms of an app.
    func realms(appID: String) async throws -> [StoredRealm]
    /// Starts a realm's history over under a new epoch: every client file and history entry is
    /// forgotten and `snapshot` (the realm's data, made by the server) becomes server version 1 (an
    /// empty snapshot leaves an empty history at version 0).
    /// Clients that come back hold the old epoch and must reset with `reason` (recorded as the
    /// realm's ``StoredRealm/epochReason``); the data stays.
    func restartHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason, snapshot: Changeset) async throws

    /// Like ``restartHistory(realmID:epoch:reason:snapshot:)`` but in one transaction with reading the
    /// history: `rewrite` gets every entry and makes the snapshot (nil leaves the realm untouched), so
    /// no upload integrated meanwhile is lost. Returns whether the history was restarted.
    func rewriteHistory(realmID: Int64, epoch: SyncEpoch, reason: ResetReason,
                        _ rewrite: @Sendable ([HistoryEntry]) throws -> Changeset?) async throws -> Bool

    // MARK: Operations: runtime settings, backup and restore, retention (see ServerStore+Archive.swift)

    /// Overrides the configuration's `clientRecovery` for an app (nil follows the configuration
    /// again); persisted, so it survives a restart. False when there is no such app.
    func setClientRecovery(appID: String, _ allowed: Bool?) async throws -> Bool
    /// Overrides the configuration's `maxOfflineTime` for an app, in seconds (0 keeps all history,
    /// nil follows the configuration again); persisted. False when there is no such app.
    func setMaxOfflineTime(appID: String, _ seconds: TimeInterval?) async throws -> Bool
    /// One realm's whole sync state (history, client files, epoch, counters), read in one transaction.
    /// - Throws: `ServerStoreError.notFound` when there is no such realm.
    func archive(realmID: Int64) async throws -> RealmArchive
    /// Replaces the history and client files of the realm of `appID` at `archive.path` (created when
    /// missing) with the archive's, in one transaction, under `epoch` with `reason`. The next file
    /// ident never goes down, so no ident handed out since the backup is handed out again.
    /// - Throws: `ServerStoreError.missingOwner` when there is no such app.
    func restore(appID: String, _ archive: RealmArchive, epoch: SyncEpoch, reason: ResetReason, now: Date) async throws -> StoredRealm
    /// Records that client files of a realm were seen at `now` (an ident, upload, download or the
    /// end of a session), and that they integrated `serverVersion` when it is given and newer than
    /// what was recorded. Neither goes back (a late touch from another node with an earlier clock
    /// changes nothing). Unknown idents are ignored.
    func touchClientFiles(realmID: Int64, idents: [Int64], serverVersion: Int64?, now: Date) async throws
    /// Compacts a realm's history in one transaction: the prefix no live client file (seen at or
    /// after `liveSince`) still needs, up to the oldest server version such a file is known to have
    /// integrated (everything when none is live), is replaced by the one changeset `snapshot` makes
    /// of it, stored at the prefix's last server version. Each file's newest client version in the
    /// removed prefix is kept, so ``lastClientVersion(realmID:fileIdent:atOrBefore:)`` stays right.
    /// Does nothing when there would be fewer than two entries to fold (the previous snapshot
    /// counts as one: a single new entry after it is folded into it).
    func compact(realmID: Int64, liveSince: Date,
                 _ snapshot: @Sendable ([HistoryEntry]) throws -> Changeset) async throws -> CompactionResult

    // MARK: Users

    /// The user with this id, or nil.
    func user(id: String) async throws -> StoredUser?
    /// The user of `appID` that has the identity (`providerType`, `identityID`), or nil.
    func user(appID: String, providerType: String, identityID: String) async throws -> StoredUser?
    /// Records a user with its identities.
    /// - Throws: `ServerStoreError.duplicateIdentity` when one of its identities belongs to another user.
    func createUser(_ user: StoredUser) async throws
    /// Replaces the user's custom JWT metadata (``StoredUser/metadata``). Returns false when
    /// there is no such user.
    @discardableResult
    func setUserMetadata(id: String, _ metadata: [String: JSONValue]) async throws -> Bool
    /// Enables or disables a user. Returns false when there is no such user.
    @discardableResult
    func setUserDisabled(id: String, disabled: Bool) async throws -> Bool
    /// Deletes a user with its identities, refresh tokens and API keys. Returns false when there is no such user.
    @discardableResult
    func deleteUser(id: String) async throws -> Bool
    /// The users of an app, oldest first.
    func users(appID: String) async throws -> [StoredUser]
    /// Adds `identity` to the user `userID`, in one transaction (linking, see
    /// SQLiteServerStore+Identities.swift). When the identity belongs to the user `absorbing` and
    /// that user never logged in and has no other identity (a registered e-mail account not used
    /// yet), the identity moves to `userID` with its own password hash (and the e-mail when
    /// `userID` has none) and `absorbing` is deleted. No other identity's password changes.
    /// Returns the user as it is now.
    /// - Throws: `ServerStoreError.duplicateIdentity` when the identity belongs to a user (another
    ///   one, or `userID` itself); `.notFound` when there is no user `userID`.
    func addIdentity(_ identity: StoredIdentity, toUser userID: String, absorbing: String?) async throws -> StoredUser

    // MARK: Refresh tokens

    /// Records a refresh token (by its digest).
    func insertRefreshToken(_ token: StoredRefreshToken) async throws
    /// The refresh token with this digest, revoked or not, or nil.
    func refreshToken(digest: String) async throws -> StoredRefreshToken?
    /// Marks one refresh token revoked. Returns false when it was unknown or already revoked.
    @discardableResult
    func revokeRefreshToken(digest: String) async throws -> Bool
    /// Marks every refresh token of a user revoked.
    func revokeRefreshTokens(userID: String) async throws
    /// Marks revoked every refresh token that logins with the API key `apiKeyID` issued; returns
    /// the devices of those it revoked now (their sync sessions must end).
    func revokeRefreshTokens(apiKeyID: String) async throws -> [String]
    /// Of `deviceIDs`, those whose login is live: a refresh token not revoked, of a user that
    /// exists and is enabled, issued by no API key or by one that exists and is enabled. Expiry
    /// does not count (an access token outlives its refresh token by at most its own lifetime).
    func liveDevices(_ deviceIDs: [String]) async throws -> Set<String>

    // MARK: API keys

    /// Records an API key (by its digest).
    func insertAPIKey(_ key: StoredAPIKey) async throws
    /// The API keys of a user, oldest first.
    func apiKeys(userID: String) async throws -> [StoredAPIKey]
    /// The API key `id` of `userID`, or nil.
    func apiKey(id: String, userID: String) async throws -> StoredAPIKey?
    /// The API key of an app with this digest, or nil.
    func apiKey(appID: String, digest: String) async throws -> StoredAPIKey?
    /// Enables or disables an API key. Returns false when the user has no such key.
    @discardableResult
    func setAPIKeyDisabled(id: String, userID: String, disabled: Bool) async throws -> Bool
    /// Deletes an API key. Returns false when the user has no such key.
    @discardableResult
    func deleteAPIKey(id: String, userID: String) async throws -> Bool

    // MARK: Sync history (see ServerStore+Sync.swift)

    /// The realm of `appID` at `path` (a partition's `PartitionValue.path`), created with `epoch` when it
    /// does not exist yet, recorded as made by `creator`. Creating is atomic: two callers racing get
    /// the same realm. With `maxPerCreator`, creating one refuses (`ServerStoreError.limitExceeded`)
    /// when `creator` already made that many realms of the app; an existing realm is returned
    /// whoever made it.
    func realm(appID: String, path: String, creatingWith epoch: SyncEpoch, now: Date, creator: String?, maxPerCreator: Int?) async throws
        -> StoredRealm
    /// The newest server version of a realm's history (0 while it is empty).
    func latestServerVersion(realmID: Int64) async throws -> Int64
    /// The newest server versions of several realms at once (a node's periodic check against the
    /// store); realms that do not exist are left out.
    func latestServerVersions(realmIDs: [Int64]) async throws -> [Int64: Int64]
    /// Allocates the realm's next client file ident with `salt`.
    /// Registers a client file of `realmID` for `userID`; with `maxPerUser`, refuses
    /// (`ServerStoreError.limitExceeded`) when the user already has that many, in the same transaction.
    func newClientFile(realmID: Int64, salt: Int64, now: Date, userID: String?, maxPerUser: Int?) async throws -> StoredClientFile
    /// The client file `ident` of a realm, or nil (also when a restore or a restart forgot it).
    func clientFile(realmID: Int64, ident: Int64) async throws -> StoredClientFile?
    /// History entries after `serverVersion`, in order, until their encoded changesets reach `maxBytes`
    /// (at least one entry when there is any).
    func history(realmID: Int64, after serverVersion: Int64, maxBytes: Int) async throws -> [HistoryEntry]
    /// The newest client version of `fileIdent` integrated at or before `serverVersion` (0 for none).
    func lastClientVersion(realmID: Int64, fileIdent: Int64, atOrBefore serverVersion: Int64) async throws -> Int64
    /// Integrates one upload in a single transaction: reads what `integrate` needs, calls it, appends the
    /// changesets it returns (stamped with `fileIdent` and the next server versions; one returned with
    /// file ident ``IntegrationInput/serverAuthored`` is the server's own, a compensating write,
    /// recorded under ``WriteCheck/serverFileIdent``) and records the file's newest integrated client version. Nothing is written when
    /// `integrate` throws.
    ///
    /// `historyAfter` is where ``IntegrationInput/historyAfterBase`` starts: the upload's base, or
    /// later when the caller rebased the upload before the transaction and needs only what came since.
    func integrate(
        realmID: Int64, fileIdent: Int64, baseServerVersion: Int64, historyAfter: Int64,
        _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult
    /// Whether ``integrate(realmID:fileIdent:baseServerVersion:historyAfter:_:)`` usually runs
    /// `integrate` while no lock is held that other uploads wait on (PostgreSQL: against what the
    /// node knows of the realm, checked by the append itself). When false (SQLite: one write lock
    /// for every app), the caller rebases an upload over the history before the call, so that
    /// little work is left under the lock.
    var integratesOutsideTheLock: Bool { get }

    // MARK: Life cycle

    /// See ``ServerStore/sharedSecret(named:making:)`` (implemented by stores that nodes share).
    func sharedSecret(named name: String, making: @Sendable () -> String) async throws -> String?
    /// See ``ServerStore/replaceSharedSecret(named:stored:with:)``.
    func replaceSharedSecret(named name: String, stored: String, with replacement: String) async throws -> Bool
    /// Closes the store (its database, its connections). It must not be used afterwards.
    func shutdown() async
    /// Throws when the store cannot answer a trivial query now (`/health/ready`).
    func checkReachable() async throws

    // MARK: Several nodes (see StoreChange.swift)

    /// Tells the other nodes on this store of `change`.
    func publish(_ change: StoreChange) async throws
    /// The changes other nodes make; nil for a store no other node uses. With `interest`, history
    /// of realms it does not admit is left out, as cheaply as the store can (``RealmInterest``).
    func changesFromOtherNodes(servedBy interest: RealmInterest?) -> AsyncStream<StoreChange>?
}

extension ServerStore {
    /// A secret every server node on this store shares (the token secret, the admin key): the one
    /// stored under `name`, or `making()`'s, stored by the first node that asks. Nil from a store
    /// one node has to itself (SQLite), whose node keeps its secrets in its data folder.
    package func sharedSecret(named name: String, making: @Sendable () -> String) async throws -> String? { nil }
    /// Stores `replacement` under `name` if the value stored is still `stored` (a secret wrapped
    /// in place); whether it did. False from a store that shares no secrets.
    package func replaceSharedSecret(named name: String, stored: String, with replacement: String) async throws -> Bool { false }

    package var integratesOutsideTheLock: Bool { false }

    /// One ``latestServerVersion(realmID:)`` per realm (a store that can do better says so).
    package func latestServerVersions(realmIDs: [Int64]) async throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        for id in Set(realmIDs) {
            do {
                versions[id] = try await latestServerVersion(realmID: id)
            } catch let error as ServerStoreError where error.code == .notFound {
                continue
            }
        }
        return versions
    }

    /// A realm made by no one in particular (no limit applies).
    package func realm(appID: String, path: String, creatingWith epoch: SyncEpoch, now: Date) async throws -> StoredRealm {
        try await realm(appID: appID, path: path, creatingWith: epoch, now: now, creator: nil, maxPerCreator: nil)
    }

    /// A client file registered for no one in particular.
    package func newClientFile(realmID: Int64, salt: Int64, now: Date) async throws -> StoredClientFile {
        try await newClientFile(realmID: realmID, salt: salt, now: now, userID: nil, maxPerUser: nil)
    }

    /// ``integrate(realmID:fileIdent:baseServerVersion:historyAfter:_:)`` with the whole history
    /// after the upload's base.
    package func integrate(
        realmID: Int64, fileIdent: Int64, baseServerVersion: Int64,
        _ integrate: @Sendable (IntegrationInput) throws -> [Changeset]
    ) async throws -> IntegrationResult {
        try await self.integrate(
            realmID: realmID, fileIdent: fileIdent, baseServerVersion: baseServerVersion, historyAfter: baseServerVersion, integrate)
    }
}

/// An error a ``ServerStore`` reports for a request it cannot carry out.
package struct ServerStoreError: Error, Sendable, CustomStringConvertible {
    package enum Code: Sendable, Hashable {
        /// An identity (provider and id within the app) already belongs to a user.
        case duplicateIdentity
        /// A row names a user or app that does not exist.
        case missingOwner
        /// A sync request names a realm or client file that does not exist, or a version outside the history.
        case notFound
        /// A limit the caller set was reached (client files per user).
        case limitExceeded
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "ServerStoreError.\(code): \(message)" }
}
