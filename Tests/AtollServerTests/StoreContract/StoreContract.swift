import AtollServer
import Testing

/// Every behaviour a ``ServerStore`` must show, written once against `any ServerStore` so that every
/// store runs the same checks. A store's suite makes a fresh, empty store per case and runs it:
///
/// ```swift
/// @Test(arguments: StoreContract.allCases)
/// func contract(_ behaviour: StoreContract) async throws {
///     let store = try makeEmptyStore()
///     try await behaviour.run(on: store)
/// }
/// ```
///
/// Each case starts from an empty store (no apps) and checks values, not just that nothing threw.
/// Dates are whole seconds, which every store keeps exactly. The cases live in
/// `StoreContract+<Area>.swift`, one function per case.
enum StoreContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    // Apps (StoreContract+Apps.swift)
    case appsAreCreatedOnceAndListedByID
    case createAppRecordsTheAppsSettings
    case syncIsTurnedOffAndOn
    case runtimeSettingsAreSetAndCleared
    case runtimeAppsAreKeptAndReplaced

    // Users (StoreContract+Users.swift)
    case usersAreRecordedWithTheirIdentities
    case createUserRefusesAMissingApp
    case createUserRefusesATakenIdentityAndWritesNothing
    case usersAreDisabledAndEnabled
    case userMetadataIsKeptAndReplaced
    case deletingAUserRemovesItsIdentitiesTokensAndKeys

    // Linking (StoreContract+Linking.swift)
    case addIdentityAppendsAfterTheUsersIdentities
    case addIdentityAbsorbsAnAccountNeverUsed
    case addIdentityRefusesToAbsorbAnAccountInUse
    case addIdentityRefusesOwnedIdentitiesAndUnknownUsers

    // Refresh tokens and API keys (StoreContract+Tokens.swift)
    case refreshTokensAreRevokedOnce
    case apiKeysAreListedFoundDisabledAndDeleted
    case apiKeyLoginsAreRevokedWithTheirKey
    case liveDevicesAreUnrevokedLoginsOfEnabledUsersAndKeys

    // E-mail accounts (StoreContract+EmailAccounts.swift)
    case pendingRegistrationsAreRecordedOncePerName
    case deletingARegistrationForgetsItsConfirmationTokens
    case confirmingARegistrationMakesTheUser
    case accountTokensKeepOnlyTheNewestUnexpired
    case accountTokensAreTakenOnceWhenEverythingMatches
    case accountTokensAreDeletedPerPurpose
    case passwordHashesAreReplaced
    case expiredRegistrationsFreeTheirName

    // Realms and client files (StoreContract+Realms.swift)
    case realmsAreCreatedOnce
    case concurrentRealmCreationMakesOneRealm
    case realmsPerCreatorAreLimited
    case clientFilesGetConsecutiveIdents
    case clientFilesPerUserAreLimited
    case concurrentClientFilesGetDistinctIdents
    case unknownRealmsAndClientFilesAreNotFound

    // History (StoreContract+History.swift)
    case integrateAppendsStampedChangesets
    case integrationInputDescribesTheHistory
    case serverAuthoredChangesetsAreNotTheUploaders
    case failedIntegrationWritesNothing
    case historyIsPagedByBytes
    case lastClientVersionCountsUpToAServerVersion
    case concurrentIntegrationKeepsOneGaplessHistory
    case latestVersionsAreReadTogether

    // Restart, archive and restore (StoreContract+Restore.swift)
    case restartHistoryStartsANewEpoch
    case rewriteHistorySeesEveryEntry
    case archiveAndRestoreRoundTrip
    case restoreRollsAChangedRealmBack
    case restoreRefusesAMissingApp

    // Retention (StoreContract+Retention.swift)
    case touchingClientFilesRecordsSeenAndIntegrated
    case lastSeenNeverGoesBack
    case compactionFoldsWhatNoLiveClientNeeds
    case compactionNeedsTwoEntries
    case compactionFoldsIntoThePreviousSnapshot

    /// Runs this behaviour's checks on `store`, which must be empty.
    func run(on store: any ServerStore) async throws {
        switch self {
        case .appsAreCreatedOnceAndListedByID: try await Self.appsAreCreatedOnceAndListedByID(store)
        case .createAppRecordsTheAppsSettings: try await Self.createAppRecordsTheAppsSettings(store)
        case .syncIsTurnedOffAndOn: try await Self.syncIsTurnedOffAndOn(store)
        case .runtimeSettingsAreSetAndCleared: try await Self.runtimeSettingsAreSetAndCleared(store)
        case .runtimeAppsAreKeptAndReplaced: try await Self.runtimeAppsAreKeptAndReplaced(store)

        case .usersAreRecordedWithTheirIdentities: try await Self.usersAreRecordedWithTheirIdentities(store)
        case .createUserRefusesAMissingApp: try await Self.createUserRefusesAMissingApp(store)
        case .createUserRefusesATakenIdentityAndWritesNothing: try await Self.createUserRefusesATakenIdentityAndWritesNothing(store)
        case .usersAreDisabledAndEnabled: try await Self.usersAreDisabledAndEnabled(store)
        case .userMetadataIsKeptAndReplaced: try await Self.userMetadataIsKeptAndReplaced(store)
        case .deletingAUserRemovesItsIdentitiesTokensAndKeys: try await Self.deletingAUserRemovesItsIdentitiesTokensAndKeys(store)

        case .addIdentityAppendsAfterTheUsersIdentities: try await Self.addIdentityAppendsAfterTheUsersIdentities(store)
        case .addIdentityAbsorbsAnAccountNeverUsed: try await Self.addIdentityAbsorbsAnAccountNeverUsed(store)
        case .addIdentityRefusesToAbsorbAnAccountInUse: try await Self.addIdentityRefusesToAbsorbAnAccountInUse(store)
        case .addIdentityRefusesOwnedIdentitiesAndUnknownUsers: try await Self.addIdentityRefusesOwnedIdentitiesAndUnknownUsers(store)

        case .refreshTokensAreRevokedOnce: try await Self.refreshTokensAreRevokedOnce(store)
        case .apiKeysAreListedFoundDisabledAndDeleted: try await Self.apiKeysAreListedFoundDisabledAndDeleted(store)
        case .apiKeyLoginsAreRevokedWithTheirKey: try await Self.apiKeyLoginsAreRevokedWithTheirKey(store)
        case .liveDevicesAreUnrevokedLoginsOfEnabledUsersAndKeys: try await Self.liveDevicesAreUnrevokedLoginsOfEnabledUsersAndKeys(store)

        case .pendingRegistrationsAreRecordedOncePerName: try await Self.pendingRegistrationsAreRecordedOncePerName(store)
        case .deletingARegistrationForgetsItsConfirmationTokens: try await Self.deletingARegistrationForgetsItsConfirmationTokens(store)
        case .confirmingARegistrationMakesTheUser: try await Self.confirmingARegistrationMakesTheUser(store)
        case .accountTokensKeepOnlyTheNewestUnexpired: try await Self.accountTokensKeepOnlyTheNewestUnexpired(store)
        case .accountTokensAreTakenOnceWhenEverythingMatches: try await Self.accountTokensAreTakenOnceWhenEverythingMatches(store)
        case .accountTokensAreDeletedPerPurpose: try await Self.accountTokensAreDeletedPerPurpose(store)
        case .passwordHashesAreReplaced: try await Self.passwordHashesAreReplaced(store)
        case .expiredRegistrationsFreeTheirName: try await Self.expiredRegistrationsFreeTheirName(store)

        case .realmsAreCreatedOnce: try await Self.realmsAreCreatedOnce(store)
        case .concurrentRealmCreationMakesOneRealm: try await Self.concurrentRealmCreationMakesOneRealm(store)
        case .realmsPerCreatorAreLimited: try await Self.realmsPerCreatorAreLimited(store)
        case .clientFilesGetConsecutiveIdents: try await Self.clientFilesGetConsecutiveIdents(store)
        case .clientFilesPerUserAreLimited: try await Self.clientFilesPerUserAreLimited(store)
        case .concurrentClientFilesGetDistinctIdents: try await Self.concurrentClientFilesGetDistinctIdents(store)
        case .unknownRealmsAndClientFilesAreNotFound: try await Self.unknownRealmsAndClientFilesAreNotFound(store)

        case .integrateAppendsStampedChangesets: try await Self.integrateAppendsStampedChangesets(store)
        case .latestVersionsAreReadTogether: try await Self.latestVersionsAreReadTogether(store)
        case .integrationInputDescribesTheHistory: try await Self.integrationInputDescribesTheHistory(store)
        case .serverAuthoredChangesetsAreNotTheUploaders: try await Self.serverAuthoredChangesetsAreNotTheUploaders(store)
        case .failedIntegrationWritesNothing: try await Self.failedIntegrationWritesNothing(store)
        case .historyIsPagedByBytes: try await Self.historyIsPagedByBytes(store)
        case .lastClientVersionCountsUpToAServerVersion: try await Self.lastClientVersionCountsUpToAServerVersion(store)
        case .concurrentIntegrationKeepsOneGaplessHistory: try await Self.concurrentIntegrationKeepsOneGaplessHistory(store)

        case .restartHistoryStartsANewEpoch: try await Self.restartHistoryStartsANewEpoch(store)
        case .rewriteHistorySeesEveryEntry: try await Self.rewriteHistorySeesEveryEntry(store)
        case .archiveAndRestoreRoundTrip: try await Self.archiveAndRestoreRoundTrip(store)
        case .restoreRollsAChangedRealmBack: try await Self.restoreRollsAChangedRealmBack(store)
        case .restoreRefusesAMissingApp: try await Self.restoreRefusesAMissingApp(store)

        case .touchingClientFilesRecordsSeenAndIntegrated: try await Self.touchingClientFilesRecordsSeenAndIntegrated(store)
        case .lastSeenNeverGoesBack: try await Self.lastSeenNeverGoesBack(store)
        case .compactionFoldsWhatNoLiveClientNeeds: try await Self.compactionFoldsWhatNoLiveClientNeeds(store)
        case .compactionNeedsTwoEntries: try await Self.compactionNeedsTwoEntries(store)
        case .compactionFoldsIntoThePreviousSnapshot: try await Self.compactionFoldsIntoThePreviousSnapshot(store)
        }
    }

    var testDescription: String {
        switch self {
        case .appsAreCreatedOnceAndListedByID: "createApp does nothing for a known id; apps() is ordered by id"
        case .createAppRecordsTheAppsSettings: "createApp records the app's sync and runtime settings"
        case .syncIsTurnedOffAndOn: "setSyncEnabled turns sync off and on; false for an unknown app"
        case .runtimeSettingsAreSetAndCleared: "client recovery and max offline time are set and cleared; false for an unknown app"
        case .runtimeAppsAreKeptAndReplaced: "runtime app configurations are kept, replaced, listed by id; ifAbsent keeps the first"

        case .usersAreRecordedWithTheirIdentities: "users are found by id and identity, listed oldest first, identities in order"
        case .createUserRefusesAMissingApp: "createUser of an unknown app throws missingOwner"
        case .createUserRefusesATakenIdentityAndWritesNothing: "createUser with a taken identity throws duplicateIdentity and writes nothing"
        case .usersAreDisabledAndEnabled: "setUserDisabled disables and enables; false for an unknown user"
        case .userMetadataIsKeptAndReplaced: "a user's custom JWT metadata is kept with it and replaced whole; false for an unknown user"
        case .deletingAUserRemovesItsIdentitiesTokensAndKeys: "deleteUser removes identities, refresh tokens and API keys"

        case .addIdentityAppendsAfterTheUsersIdentities: "addIdentity appends an identity after the user's others"
        case .addIdentityAbsorbsAnAccountNeverUsed: "addIdentity absorbs an account never used; each e-mail identity keeps its own password"
        case .addIdentityRefusesToAbsorbAnAccountInUse: "addIdentity refuses to absorb an account that was used, and changes nothing"
        case .addIdentityRefusesOwnedIdentitiesAndUnknownUsers: "addIdentity refuses the user's own identity and unknown users"

        case .refreshTokensAreRevokedOnce: "refresh tokens are found by digest and revoked once, one or all of a user"
        case .apiKeysAreListedFoundDisabledAndDeleted: "API keys are listed oldest first, found, disabled, enabled and deleted"
        case .apiKeyLoginsAreRevokedWithTheirKey: "revokeRefreshTokens(apiKeyID:) revokes that key's live logins and names their devices"
        case .liveDevicesAreUnrevokedLoginsOfEnabledUsersAndKeys: "liveDevices: unrevoked logins of enabled users, of no key or an enabled one"

        case .pendingRegistrationsAreRecordedOncePerName: "a pending registration is refused for a taken name or an unknown app"
        case .deletingARegistrationForgetsItsConfirmationTokens: "deletePendingUser forgets the registration and its confirmation tokens"
        case .confirmingARegistrationMakesTheUser: "confirmPendingUser makes the user with the pending password hash, once"
        case .accountTokensKeepOnlyTheNewestUnexpired: "insertAccountToken keeps only the newest unexpired tokens of its owner and purpose"
        case .accountTokensAreTakenOnceWhenEverythingMatches: "takeAccountToken takes a token once, only with its digest and purpose before it expires"
        case .accountTokensAreDeletedPerPurpose: "deleteAccountTokens forgets one e-mail's tokens of one purpose"
        case .passwordHashesAreReplaced: "setPasswordHash replaces one e-mail identity's hash, no other; false for an unknown identity"
        case .expiredRegistrationsFreeTheirName: "an expired registration frees its name with its tokens; confirming needs the registration window"

        case .realmsAreCreatedOnce: "realm(appID:path:) creates a realm once per app and path; unknown app throws missingOwner"
        case .concurrentRealmCreationMakesOneRealm: "20 concurrent realm(appID:path:) calls make one realm"
        case .realmsPerCreatorAreLimited: "a user creates at most maxPerCreator realms of an app; existing realms are found"
        case .clientFilesGetConsecutiveIdents: "client files get idents 1, 2, 3 per realm with their salt"
        case .clientFilesPerUserAreLimited: "newClientFile refuses a user at maxPerUser files with limitExceeded"
        case .concurrentClientFilesGetDistinctIdents: "20 concurrent newClientFile calls get idents 1...20"
        case .unknownRealmsAndClientFilesAreNotFound: "unknown realms and client files throw notFound"

        case .latestVersionsAreReadTogether: "latestServerVersions reads several realms at once and leaves out unknown ones"
        case .integrateAppendsStampedChangesets: "integrate appends at consecutive versions, stamps the file ident, records the client version"
        case .integrationInputDescribesTheHistory: "the integration input holds the history after historyAfter, versions and epoch"
        case .serverAuthoredChangesetsAreNotTheUploaders: "a server-authored changeset is recorded under the server's file ident"
        case .failedIntegrationWritesNothing: "nothing is written when the integration throws"
        case .historyIsPagedByBytes: "history(after:maxBytes:) stops once maxBytes is reached, with at least one entry"
        case .lastClientVersionCountsUpToAServerVersion: "lastClientVersion(atOrBefore:) is the file's newest client version up to a server version"
        case .concurrentIntegrationKeepsOneGaplessHistory: "8 clients integrating at once make one history without gaps or duplicates"

        case .restartHistoryStartsANewEpoch: "restartHistory makes the snapshot version 1 under a new epoch and forgets client files"
        case .rewriteHistorySeesEveryEntry: "rewriteHistory sees every entry; nil or a throw leaves the realm untouched"
        case .archiveAndRestoreRoundTrip: "a realm's archive restores into another app as it was"
        case .restoreRollsAChangedRealmBack: "a restore rolls a realm back and never lowers its next file ident"
        case .restoreRefusesAMissingApp: "restore into an unknown app throws missingOwner"

        case .touchingClientFilesRecordsSeenAndIntegrated: "touchClientFiles records when files were seen and the newest version they integrated"
        case .lastSeenNeverGoesBack: "touchClientFiles never moves lastSeen back"
        case .compactionFoldsWhatNoLiveClientNeeds: "compact folds the prefix no live client needs into one snapshot"
        case .compactionNeedsTwoEntries: "compact does nothing with fewer than two entries to fold"
        case .compactionFoldsIntoThePreviousSnapshot: "compact folds new entries together with the previous snapshot"
        }
    }
}
