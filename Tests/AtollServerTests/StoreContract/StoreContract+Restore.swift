import AtollCore
import AtollServer
import Testing

/// Starting a realm's history over (restart, rewrite), and its archive and restore.
extension StoreContract {
    /// The realm `id` of app `tasks` as the store has it now.
    static func currentRealm(_ store: any ServerStore, _ id: Int64, app: String = appID) async throws -> StoredRealm {
        try #require(try await store.realms(appID: app).first { $0.id == id })
    }

    static func restartHistoryStartsANewEpoch(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        let b = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...3)
        try await upload(store, realm, file: b, versions: 1...1)
        // Compacted, so that the restart has something to reset there too.
        #expect(try await store.compact(realmID: realm.id, liveSince: at(10_000)) { snapshot(of: $0) }.compactedThrough == 4)

        let data = Changeset(version: 0, timestamp: 1_700_000_000_900, instructions: [.createObject(task("kept"))])
        try await store.restartHistory(realmID: realm.id, epoch: 99, reason: .breakingSchemaChange, snapshot: data)
        #expect(try await wholeHistory(store, realm.id) == [HistoryEntry(serverVersion: 1, changeset: data)])
        #expect(try await store.latestServerVersion(realmID: realm.id) == 1)
        #expect(try await currentRealm(store, realm.id)
            == StoredRealm(id: realm.id, appID: appID, path: realm.path, epoch: 99, createdAt: realm.createdAt,
                           epochReason: .breakingSchemaChange, compactedThrough: 0))
        #expect(try await store.clientFile(realmID: realm.id, ident: a) == nil)
        #expect(try await store.clientFile(realmID: realm.id, ident: b) == nil)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: a, atOrBefore: 1) == 0)
        // The forgotten idents are not handed out again.
        let c = try await store.newClientFile(realmID: realm.id, salt: 3, now: at(2)).ident.ident
        #expect(c == 3)
        let next = try await store.integrate(realmID: realm.id, fileIdent: c, baseServerVersion: 1) { input in
            guard input.epoch == 99, input.compactedThrough == 0, input.latestServerVersion == 1 else {
                throw ContractViolation("after the restart the integration saw \(input.epoch), \(input.compactedThrough), \(input.latestServerVersion)")
            }
            return [changeset("c1", version: 1)]
        }
        #expect(next.latestServerVersion == 2)

        // A realm without data starts over with an empty history.
        try await store.restartHistory(realmID: realm.id, epoch: 100, reason: .epochChanged,
                                       snapshot: Changeset(version: 0, timestamp: 0, instructions: []))
        #expect(try await wholeHistory(store, realm.id) == [])
        #expect(try await store.latestServerVersion(realmID: realm.id) == 0)
        #expect(try await currentRealm(store, realm.id).epoch == 100)
        #expect(try await currentRealm(store, realm.id).epochReason == .epochChanged)
        #expect(try await store.clientFile(realmID: realm.id, ident: c) == nil)
    }

    static func rewriteHistorySeesEveryEntry(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1))
        try await upload(store, realm, file: a.ident.ident, versions: 1...3)
        let before = try await wholeHistory(store, realm.id)
        let seen = Recorded<[HistoryEntry]>([])

        let declined = try await store.rewriteHistory(realmID: realm.id, epoch: 99, reason: .breakingSchemaChange) { entries in
            seen.set(entries)
            return nil
        }
        #expect(declined == false)
        #expect(seen.value == before, "every entry, in order")
        await #expect(throws: Refused.self) {
            _ = try await store.rewriteHistory(realmID: realm.id, epoch: 99, reason: .breakingSchemaChange) { _ in throw Refused() }
        }
        // Untouched either way.
        #expect(try await wholeHistory(store, realm.id) == before)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 3)
        #expect(try await currentRealm(store, realm.id) == realm)
        #expect(try await store.clientFile(realmID: realm.id, ident: a.ident.ident)?.lastIntegratedClientVersion == 3)

        let rewritten = try await store.rewriteHistory(realmID: realm.id, epoch: 99, reason: .breakingSchemaChange) { entries in
            seen.set(entries)
            return snapshot(of: entries)
        }
        #expect(rewritten)
        #expect(seen.value == before)
        #expect(try await wholeHistory(store, realm.id) == [HistoryEntry(serverVersion: 1, changeset: snapshot(of: before))])
        #expect(try await store.latestServerVersion(realmID: realm.id) == 1)
        #expect(try await currentRealm(store, realm.id)
            == StoredRealm(id: realm.id, appID: appID, path: realm.path, epoch: 99, createdAt: realm.createdAt,
                           epochReason: .breakingSchemaChange, compactedThrough: 0))
        #expect(try await store.clientFile(realmID: realm.id, ident: a.ident.ident) == nil)
    }

    /// A realm with two client files, four uploads and a compaction through version 2 (file 1 is
    /// live and has integrated 2, file 2 was last seen long ago); returns its archive.
    static func archivedRealm(_ store: any ServerStore) async throws -> (StoredRealm, RealmArchive) {
        let realm = try await store.realm(appID: appID, path: "s:home", creatingWith: epoch, now: at(1))
        let a = try await store.newClientFile(realmID: realm.id, salt: 11, now: at(2), userID: "u1", maxPerUser: nil).ident.ident
        let b = try await store.newClientFile(realmID: realm.id, salt: 22, now: at(3)).ident.ident
        try await upload(store, realm, file: a, versions: 1...2)  // 1, 2
        try await upload(store, realm, file: b, versions: 1...1)  // 3
        try await upload(store, realm, file: a, versions: 3...3)  // 4
        try await store.touchClientFiles(realmID: realm.id, idents: [a], serverVersion: 2, now: at(50))
        try await store.touchClientFiles(realmID: realm.id, idents: [b], serverVersion: 3, now: at(5))
        let compaction = try await store.compact(realmID: realm.id, liveSince: at(40)) { snapshot(of: $0) }
        #expect(compaction.compactedThrough == 2)
        return (realm, try await store.archive(realmID: realm.id))
    }

    static func archiveAndRestoreRoundTrip(_ store: any ServerStore) async throws {
        try await makeApp(store)
        try await makeApp(store, "copy")
        let (realm, archive) = try await archivedRealm(store)
        let history = try await wholeHistory(store, realm.id)

        #expect(archive.path == "s:home")
        #expect(archive.epoch == epoch.rawValue)
        #expect(archive.epochReason == ResetReason.epochChanged.rawValue)
        #expect(archive.latestServerVersion == 4)
        #expect(archive.nextFileIdent == 3)
        #expect(archive.compactedThrough == 2)
        #expect(archive.clientFiles.map(\.ident) == [1, 2])
        #expect(archive.clientFiles.map(\.salt) == [11, 22])
        #expect(archive.clientFiles.map(\.lastClientVersion) == [3, 1])
        #expect(archive.clientFiles.map(\.compactedClientVersion) == [2, 0])
        #expect(archive.clientFiles.map(\.lastServerVersion) == [2, 3])
        #expect(archive.clientFiles.map(\.createdAt) == [at(2), at(3)].map(\.timeIntervalSince1970))
        #expect(archive.clientFiles.map(\.lastSeen) == [at(50), at(5)].map(\.timeIntervalSince1970))
        #expect(archive.history.map(\.serverVersion) == [2, 3, 4])
        #expect(archive.history.map(\.originFileIdent) == [0, 2, 1], "the snapshot is the server's")
        #expect(archive.history.map(\.originClientVersion) == [0, 1, 3])
        #expect(archive.history.map(\.originTimestamp) == history.map(\.changeset.timestamp))
        #expect(try archive.history.map { try Changeset(decoding: $0.changeset) } == history.map(\.changeset))

        let copy = try await store.restore(appID: "copy", archive, epoch: 99, reason: .historyRestored, now: at(60))
        #expect(copy.id != realm.id)
        #expect(copy == StoredRealm(id: copy.id, appID: "copy", path: "s:home", epoch: 99, createdAt: at(60),
                                    epochReason: .historyRestored, compactedThrough: 2))
        #expect(try await store.realms(appID: "copy") == [copy])
        var expected = archive
        expected.epoch = 99
        expected.epochReason = ResetReason.historyRestored.rawValue
        #expect(try await store.archive(realmID: copy.id) == expected)
        #expect(try await wholeHistory(store, copy.id) == history)
        #expect(try await store.latestServerVersion(realmID: copy.id) == 4)
        for ident: Int64 in [1, 2] {
            var original = try #require(try await store.clientFile(realmID: realm.id, ident: ident))
            original.realmID = copy.id
            #expect(try await store.clientFile(realmID: copy.id, ident: ident) == original)
        }
        // What file 1 integrated before the compaction is still known.
        #expect(try await store.lastClientVersion(realmID: copy.id, fileIdent: 1, atOrBefore: 2) == 2)
        #expect(try await store.lastClientVersion(realmID: copy.id, fileIdent: 1, atOrBefore: 4) == 3)
        #expect(try await store.lastClientVersion(realmID: copy.id, fileIdent: 2, atOrBefore: 4) == 1)
        #expect(try await store.newClientFile(realmID: copy.id, salt: 3, now: at(61)).ident.ident == 3)
        // The original is untouched.
        #expect(try await store.archive(realmID: realm.id) == archive)
    }

    static func restoreRollsAChangedRealmBack(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let (realm, archive) = try await archivedRealm(store)
        let history = try await wholeHistory(store, realm.id)
        // Changes after the backup: an upload, a new file, a touch.
        try await upload(store, realm, file: 1, versions: 4...4)
        let late = try await store.newClientFile(realmID: realm.id, salt: 33, now: at(70)).ident.ident
        #expect(late == 3)
        try await store.touchClientFiles(realmID: realm.id, idents: [1, 2], serverVersion: 5, now: at(80))

        let restored = try await store.restore(appID: appID, archive, epoch: 100, reason: .historyRestored, now: at(90))
        #expect(restored == StoredRealm(id: realm.id, appID: appID, path: "s:home", epoch: 100, createdAt: realm.createdAt,
                                        epochReason: .historyRestored, compactedThrough: 2))
        #expect(try await store.realms(appID: appID) == [restored])
        var expected = archive
        expected.epoch = 100
        expected.epochReason = ResetReason.historyRestored.rawValue
        // Ident 3 was handed out after the backup: the next ident does not go back.
        expected.nextFileIdent = 4
        #expect(try await store.archive(realmID: realm.id) == expected)
        #expect(try await wholeHistory(store, realm.id) == history)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 4)
        #expect(try await store.clientFile(realmID: realm.id, ident: late) == nil)
        #expect(try await store.clientFile(realmID: realm.id, ident: 1)?.lastIntegratedClientVersion == 3)
        #expect(try await store.clientFile(realmID: realm.id, ident: 1)?.lastSeen == at(50))
        #expect(try await store.newClientFile(realmID: realm.id, salt: 4, now: at(91)).ident.ident == 4)
    }

    static func restoreRefusesAMissingApp(_ store: any ServerStore) async throws {
        try await makeApp(store)
        let (realm, archive) = try await archivedRealm(store)
        await expectError(.missingOwner) {
            _ = try await store.restore(appID: "none", archive, epoch: 99, reason: .historyRestored, now: at(60))
        }
        #expect(try await store.realms(appID: "none") == [])
        #expect(try await store.archive(realmID: realm.id) == archive)
    }
}
