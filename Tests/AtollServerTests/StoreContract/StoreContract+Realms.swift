import AtollCore
import AtollServer
import Testing

/// Realms and the client files registered in them.
extension StoreContract {
    static func realmsAreCreatedOnce(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        let home = try await store.realm(appID: appID, path: "s:home", creatingWith: 7, now: at(1))
        #expect(home.appID == appID)
        #expect(home.path == "s:home")
        #expect(home.epoch == 7)
        #expect(home.createdAt == at(1))
        #expect(home.epochReason == .epochChanged)
        #expect(home.compactedThrough == 0)

        // Found, not made again: the first epoch and creation time stay.
        #expect(try await store.realm(appID: appID, path: "s:home", creatingWith: 8, now: at(2)) == home)
        let work = try await store.realm(appID: appID, path: "s:work", creatingWith: 9, now: at(3))
        let elsewhere = try await store.realm(appID: "other", path: "s:home", creatingWith: 10, now: at(4))
        #expect(Set([home.id, work.id, elsewhere.id]).count == 3)
        #expect(work.epoch == 9)
        #expect(elsewhere.appID == "other")

        #expect(try await store.realms(appID: appID) == [home, work])
        #expect(try await store.realms(appID: "other") == [elsewhere])
        #expect(try await store.realms(appID: "none") == [])
        #expect(try await store.latestServerVersion(realmID: home.id) == 0)

        await expectError(.missingOwner) { _ = try await store.realm(appID: "none", path: "s:home", creatingWith: 1, now: at(5)) }
        #expect(try await store.realms(appID: "none") == [])
    }

    static func realmsPerCreatorAreLimited(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "other")
        func make(_ path: String, by user: String?, app: String = appID) async throws -> StoredRealm {
            try await store.realm(appID: app, path: path, creatingWith: 1, now: at(1), creator: user, maxPerCreator: 2)
        }
        let a = try await make("s:a", by: "ann")
        _ = try await make("s:b", by: "ann")
        await expectError(.limitExceeded) { _ = try await make("s:c", by: "ann") }
        #expect(try await store.realms(appID: appID).map(\.path) == ["s:a", "s:b"], "nothing made past the limit")
        // An existing realm is found whoever made it; others and other apps count apart.
        #expect(try await make("s:a", by: "ann") == a)
        #expect(try await make("s:a", by: "bob") == a)
        _ = try await make("s:c", by: "bob")
        _ = try await make("s:c", by: "ann", app: "other")
        // Realms made by no one (before the limit existed, or by the server) count against no one.
        _ = try await store.realm(appID: appID, path: "s:d", creatingWith: 1, now: at(1))
        _ = try await make("s:e", by: "bob")
        await expectError(.limitExceeded) { _ = try await make("s:f", by: "bob") }

        // Twenty concurrent creations of different realms by one user make exactly two more.
        let made = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<20 {
                group.addTask {
                    do {
                        _ = try await store.realm(appID: "other", path: "s:r\(i)", creatingWith: 1, now: at(1), creator: "cy", maxPerCreator: 2)
                        return true
                    } catch let error as ServerStoreError where error.code == .limitExceeded {
                        return false
                    }
                }
            }
            var made = 0
            for try await ok in group where ok { made += 1 }
            return made
        }
        #expect(made == 2)
    }

    static func concurrentRealmCreationMakesOneRealm(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let realms = try await withThrowingTaskGroup(of: StoredRealm.self) { group in
            for i in 0..<20 {
                group.addTask {
                    try await store.realm(appID: appID, path: "s:race", creatingWith: SyncEpoch(rawValue: UInt64(100 + i)), now: at(i))
                }
            }
            var all: [StoredRealm] = []
            for try await realm in group { all.append(realm) }
            return all
        }
        #expect(realms.count == 20)
        #expect(Set(realms.map(\.id)).count == 1, "one realm id")
        #expect(Set(realms).count == 1, "and one epoch and creation time: the creator's")
        #expect(try await store.realms(appID: appID) == [realms[0]])
    }

    static func clientFilesGetConsecutiveIdents(_ store: any ServerStore) async throws {
        let home = try await makeRealm(store)
        let work = try await makeRealm(store, path: "s:work")
        let first = try await store.newClientFile(realmID: home.id, salt: 11, now: at(1))
        #expect(first == StoredClientFile(realmID: home.id, ident: FileIdent(ident: 1, salt: 11), lastIntegratedClientVersion: 0, createdAt: at(1)))
        #expect(first.lastSeen == at(1))
        #expect(first.lastServerVersion == 0)
        let second = try await store.newClientFile(realmID: home.id, salt: 22, now: at(2), userID: "u1", maxPerUser: nil)
        let third = try await store.newClientFile(realmID: home.id, salt: -5, now: at(3))
        #expect([first, second, third].map(\.ident) == [
            FileIdent(ident: 1, salt: 11), FileIdent(ident: 2, salt: 22), FileIdent(ident: 3, salt: -5),
        ])
        // Idents count per realm.
        let elsewhere = try await store.newClientFile(realmID: work.id, salt: Int64.max, now: at(4))
        #expect(elsewhere.ident == FileIdent(ident: 1, salt: Int64.max))

        #expect(try await store.clientFile(realmID: home.id, ident: 1) == first)
        #expect(try await store.clientFile(realmID: home.id, ident: 2) == second)
        #expect(try await store.clientFile(realmID: home.id, ident: 3) == third)
        #expect(try await store.clientFile(realmID: work.id, ident: 1) == elsewhere)
        #expect(try await store.clientFile(realmID: home.id, ident: 4) == nil)
        #expect(try await store.clientFile(realmID: work.id, ident: 2) == nil)
        #expect(try await store.clientFile(realmID: home.id, ident: 0) == nil)
    }

    static func clientFilesPerUserAreLimited(_ store: any ServerStore) async throws {
        let home = try await makeRealm(store)
        let work = try await makeRealm(store, path: "s:work")
        func register(_ realm: StoredRealm, _ userID: String?, max: Int?) async throws -> Int64 {
            try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1), userID: userID, maxPerUser: max).ident.ident
        }
        #expect(try await register(home, "u1", max: 2) == 1)
        #expect(try await register(home, "u1", max: 2) == 2)
        await expectError(.limitExceeded) { _ = try await register(home, "u1", max: 2) }
        await expectError(.limitExceeded, "a user's files in every realm count") { _ = try await register(work, "u1", max: 2) }
        #expect(try await store.clientFile(realmID: home.id, ident: 3) == nil)

        // A refused file took no ident.
        #expect(try await register(home, "u1", max: 3) == 3)
        #expect(try await register(home, "u2", max: 1) == 4, "another user has its own count")
        await expectError(.limitExceeded) { _ = try await register(home, "u2", max: 1) }
        #expect(try await register(home, "u1", max: nil) == 5, "no limit")
        #expect(try await register(home, nil, max: 1) == 6, "no user, no limit")
        #expect(try await register(home, nil, max: 1) == 7)
        #expect(try await register(work, "u3", max: 1) == 1)
    }

    static func concurrentClientFilesGetDistinctIdents(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let realmID = realm.id
        let files = try await withThrowingTaskGroup(of: StoredClientFile.self) { group in
            for i in 0..<20 {
                group.addTask { try await store.newClientFile(realmID: realmID, salt: Int64(1000 + i), now: at(i)) }
            }
            var all: [StoredClientFile] = []
            for try await file in group { all.append(file) }
            return all
        }
        #expect(Set(files.map(\.ident.ident)) == Set(1...20))
        #expect(Set(files.map(\.ident.salt)) == Set(1000..<1020))
        for file in files {
            #expect(try await store.clientFile(realmID: realmID, ident: file.ident.ident) == file)
        }
        #expect(try await store.newClientFile(realmID: realmID, salt: 1, now: at(30)).ident.ident == 21)
    }

    static func unknownRealmsAndClientFilesAreNotFound(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let missing: Int64 = 987_654_321
        let changeset = changeset("x", version: 1)
        let called = Recorded(false)

        await expectError(.notFound) { _ = try await store.latestServerVersion(realmID: missing) }
        await expectError(.notFound) { _ = try await store.newClientFile(realmID: missing, salt: 1, now: at(1)) }
        await expectError(.notFound) {
            _ = try await store.newClientFile(realmID: missing, salt: 1, now: at(1), userID: "u1", maxPerUser: 5)
        }
        #expect(try await store.clientFile(realmID: missing, ident: 1) == nil)
        await expectError(.notFound, "unknown realm") {
            _ = try await store.integrate(realmID: missing, fileIdent: 1, baseServerVersion: 0) { _ in
                called.set(true)
                return [changeset]
            }
        }
        await expectError(.notFound, "unknown client file") {
            _ = try await store.integrate(realmID: realm.id, fileIdent: 1, baseServerVersion: 0) { _ in
                called.set(true)
                return [changeset]
            }
        }
        #expect(called.value == false, "the integration is not called")
        await expectError(.notFound) { _ = try await store.archive(realmID: missing) }
        await expectError(.notFound) { _ = try await store.compact(realmID: missing, liveSince: at(0)) { snapshot(of: $0) } }

        #expect(try await store.latestServerVersion(realmID: realm.id) == 0)
        #expect(try await wholeHistory(store, realm.id) == [])
        #expect(try await store.realms(appID: appID) == [realm])
    }
}
