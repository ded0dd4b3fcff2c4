import AtollCore
import AtollServer
import Foundation
import Testing

/// Fixtures the contract's cases share: an app, a realm, identities, changesets and uploads.
extension StoreContract {
    static let appID = "tasks"
    static let epoch: SyncEpoch = 7

    /// `seconds` after a fixed instant, in whole seconds: every store keeps them exactly (a store
    /// that keeps microseconds or doubles alike).
    static func at(_ seconds: Int) -> Date {
        Date(timeIntervalSince1970: 1_700_000_000 + TimeInterval(seconds))
    }

    static func makeApp(_ store: any ServerStore, _ id: String = appID) async throws {
        try await store.createApp(StoredApp(id: id, createdAt: at(0)))
    }

    /// The realm `path` of app `tasks` (created with it), under epoch 7.
    static func makeRealm(_ store: any ServerStore, path: String = "s:home") async throws -> StoredRealm {
        try await makeApp(store)
        return try await store.realm(appID: appID, path: path, creatingWith: epoch, now: at(0))
    }

    // MARK: Users

    static func anonymous(_ id: String) -> StoredIdentity { StoredIdentity(id: id, providerType: "anon-user") }
    static func email(_ address: String, password hash: String? = nil) -> StoredIdentity {
        StoredIdentity(id: address, providerType: "local-userpass", passwordHash: hash)
    }
    static func custom(_ sub: String) -> StoredIdentity { StoredIdentity(id: sub, providerType: "custom-token") }

    static func storedUser(_ id: String, _ identities: [StoredIdentity], app: String = appID, at seconds: Int = 0) -> StoredUser {
        StoredUser(id: id, appID: app, identities: identities, createdAt: at(seconds))
    }

    static func refreshToken(_ digest: String, of userID: String, at seconds: Int = 0) -> StoredRefreshToken {
        StoredRefreshToken(digest: digest, userID: userID, appID: appID, deviceID: "device-\(digest)", createdAt: at(seconds),
                           expiresAt: at(seconds + 86_400))
    }

    static func apiKey(_ id: String, of userID: String, at seconds: Int = 0) -> StoredAPIKey {
        StoredAPIKey(id: id, userID: userID, appID: appID, name: "key \(id)", digest: "digest-\(id)", createdAt: at(seconds))
    }

    // MARK: Changesets

    static func task(_ key: String) -> ObjectID { ObjectID(type: "Task", primaryKey: .string(key)) }

    /// Client version `version` of a file: creates task `key` and titles it.
    static func changeset(_ key: String, version: Int64) -> Changeset {
        Changeset(version: version, timestamp: 1_700_000_000_000 + version, instructions: [
            .createObject(task(key)), .set(task(key), path: [.property("title")], value: .string(key)),
        ])
    }

    /// The snapshot the contract's compactions and rewrites make: every instruction of `entries`
    /// in one changeset of the server (file ident 0, version 0), so a test can see what went in.
    static func snapshot(of entries: [HistoryEntry]) -> Changeset {
        Changeset(version: 0, timestamp: entries.last?.changeset.timestamp ?? 0, instructions: entries.flatMap(\.changeset.instructions))
    }

    /// Integrates client versions `versions` of `file`, one upload each on top of the newest
    /// server version. Returns the newest server version.
    @discardableResult
    static func upload(_ store: any ServerStore, _ realm: StoredRealm, file: Int64, versions: ClosedRange<Int64>) async throws -> Int64 {
        var latest: Int64 = 0
        for version in versions {
            let base = try await store.latestServerVersion(realmID: realm.id)
            let changeset = changeset("f\(file)v\(version)", version: version)
            latest = try await store.integrate(realmID: realm.id, fileIdent: file, baseServerVersion: base) { _ in [changeset] }
                .latestServerVersion
        }
        return latest
    }

    static func wholeHistory(_ store: any ServerStore, _ realmID: Int64) async throws -> [HistoryEntry] {
        try await store.history(realmID: realmID, after: 0, maxBytes: .max)
    }

    // MARK: Expectations

    /// Expects `body` to throw a ``ServerStoreError`` with `code`.
    static func expectError(_ code: ServerStoreError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () async throws -> Void) async {
        let error = await #expect(throws: ServerStoreError.self, comment, sourceLocation: sourceLocation) { try await body() }
        #expect(error?.code == code, comment, sourceLocation: sourceLocation)
    }
}

extension StoreContract {
    /// What a closure the store calls saw, for the test to check once the store returned.
    final class Recorded<Value: Sendable>: Sendable {
        private let storage: Locked<Value>
        init(_ value: Value) { storage = Locked(value) }
        var value: Value { storage.withLock { $0 } }
        func set(_ value: Value) { storage.withLock { $0 = value } }
    }

    /// A check the contract makes where it cannot `#expect` (inside a closure the store calls, or a task).
    struct ContractViolation: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// An error a contract's closure throws on purpose.
    struct Refused: Error {}
}
