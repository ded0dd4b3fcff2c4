import AtollCore
import AtollServer
import Testing

/// When client files were last seen, and compaction of the history no live client needs.
extension StoreContract {
    static func touchingClientFilesRecordsSeenAndIntegrated(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1))
        let b = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(2))
        let id = a.ident.ident
        func file(_ ident: Int64) async throws -> StoredClientFile {
            try #require(try await store.clientFile(realmID: realm.id, ident: ident))
        }

        try await store.touchClientFiles(realmID: realm.id, idents: [id, 99], serverVersion: 5, now: at(10))
        #expect(try await file(id).lastSeen == at(10))
        #expect(try await file(id).lastServerVersion == 5)
        #expect(try await file(b.ident.ident) == b, "a file not named is not touched")
        #expect(try await store.clientFile(realmID: realm.id, ident: 99) == nil, "an unknown ident is ignored, not made")

        try await store.touchClientFiles(realmID: realm.id, idents: [id], serverVersion: nil, now: at(20))
        #expect(try await file(id).lastSeen == at(20))
        #expect(try await file(id).lastServerVersion == 5, "no version keeps the one recorded")

        try await store.touchClientFiles(realmID: realm.id, idents: [id, b.ident.ident], serverVersion: 3, now: at(30))
        #expect(try await file(id).lastServerVersion == 5, "an older version does not lower it")
        #expect(try await file(id).lastSeen == at(30))
        #expect(try await file(b.ident.ident).lastServerVersion == 3)
        #expect(try await file(b.ident.ident).lastSeen == at(30))

        try await store.touchClientFiles(realmID: realm.id, idents: [], serverVersion: 9, now: at(40))
        try await store.touchClientFiles(realmID: 987_654_321, idents: [id], serverVersion: 9, now: at(40))
        var expected = a
        expected.lastSeen = at(30)
        expected.lastServerVersion = 5
        #expect(try await file(id) == expected, "the rest of the file stays")
    }

    static func lastSeenNeverGoesBack(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let id = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await store.touchClientFiles(realmID: realm.id, idents: [id], serverVersion: 4, now: at(100))
        // A touch computed earlier arrives late (another server node, a slower task).
        try await store.touchClientFiles(realmID: realm.id, idents: [id], serverVersion: 2, now: at(50))
        let file = try #require(try await store.clientFile(realmID: realm.id, ident: id))
        #expect(file.lastServerVersion == 4)
        #expect(file.lastSeen == at(100))
    }

    static func compactionFoldsWhatNoLiveClientNeeds(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let gone = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await upload(store, realm, file: gone, versions: 1...3)  // 1, 2, 3
        let live = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(2)).ident.ident
        try await store.touchClientFiles(realmID: realm.id, idents: [gone], serverVersion: 3, now: at(5))
        try await store.touchClientFiles(realmID: realm.id, idents: [live], serverVersion: 2, now: at(100))
        try await upload(store, realm, file: live, versions: 1...1)  // 4
        let before = try await wholeHistory(store, realm.id)
        let prefix = Recorded<[HistoryEntry]>([])
        let fold: @Sendable ([HistoryEntry]) throws -> Changeset = { entries in
            prefix.set(entries)
            return snapshot(of: entries)
        }

        // `live` (seen at 100) has integrated 2; `gone` (seen at 5) does not hold anything back.
        let result = try await store.compact(realmID: realm.id, liveSince: at(50), fold)
        #expect(result.realmID == realm.id)
        #expect(result.compactedThrough == 2)
        #expect(result.removedEntries == 2)
        #expect(prefix.value == Array(before[0...1]))
        let compacted = try await wholeHistory(store, realm.id)
        #expect(compacted == [HistoryEntry(serverVersion: 2, changeset: snapshot(of: Array(before[0...1])))] + before[2...])
        #expect(try await currentRealm(store, realm.id).compactedThrough == 2)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 4)
        #expect(try await store.clientFile(realmID: realm.id, ident: gone)?.lastIntegratedClientVersion == 3)
        // What `gone` had integrated is still known, folded or not.
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone, atOrBefore: 2) == 2)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone, atOrBefore: 3) == 3)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone, atOrBefore: 4) == 3)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: live, atOrBefore: 4) == 1)

        // An upload sees the compaction.
        let seen = Recorded<Int64?>(nil)
        _ = try await store.integrate(realmID: realm.id, fileIdent: live, baseServerVersion: 4) { input in
            seen.set(input.compactedThrough)
            return []
        }
        #expect(seen.value == 2)

        // Nothing live any more: everything folds, the previous snapshot with it.
        let all = try await store.compact(realmID: realm.id, liveSince: at(1000), fold)
        #expect(all.compactedThrough == 4)
        #expect(all.removedEntries == 3)
        #expect(prefix.value == compacted)
        #expect(try await wholeHistory(store, realm.id) == [HistoryEntry(serverVersion: 4, changeset: snapshot(of: compacted))])
        #expect(try await store.latestServerVersion(realmID: realm.id) == 4)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: gone, atOrBefore: 4) == 3)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: live, atOrBefore: 4) == 1)

        // Nothing left to fold.
        prefix.set([])
        let again = try await store.compact(realmID: realm.id, liveSince: at(1000), fold)
        #expect(again.compactedThrough == 4)
        #expect(again.removedEntries == 0)
        #expect(prefix.value == [], "the snapshot is not made")
        #expect(try await wholeHistory(store, realm.id).map(\.serverVersion) == [4])
    }

    static func compactionNeedsTwoEntries(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let called = Recorded(false)
        let fold: @Sendable ([HistoryEntry]) throws -> Changeset = { entries in
            called.set(true)
            return snapshot(of: entries)
        }
        let empty = try await store.compact(realmID: realm.id, liveSince: at(1000), fold)
        #expect(empty.realmID == realm.id)
        #expect(empty.compactedThrough == 0)
        #expect(empty.removedEntries == 0)

        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...1)
        let one = try await store.compact(realmID: realm.id, liveSince: at(1000), fold)
        #expect(one.compactedThrough == 0)
        #expect(one.removedEntries == 0)
        #expect(try await wholeHistory(store, realm.id).map(\.serverVersion) == [1])

        // A live file that has integrated nothing holds everything back.
        try await upload(store, realm, file: a, versions: 2...3)
        _ = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(500))
        let held = try await store.compact(realmID: realm.id, liveSince: at(400), fold)
        #expect(held.compactedThrough == 0)
        #expect(held.removedEntries == 0)
        #expect(called.value == false, "no snapshot is made when nothing is folded")
        #expect(try await wholeHistory(store, realm.id).map(\.serverVersion) == [1, 2, 3])
        #expect(try await currentRealm(store, realm.id).compactedThrough == 0)
    }

    static func compactionFoldsIntoThePreviousSnapshot(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...2)
        let first = try await store.compact(realmID: realm.id, liveSince: at(1000)) { snapshot(of: $0) }
        #expect(first.compactedThrough == 2)
        #expect(first.removedEntries == 2)

        // One new entry and the snapshot are two entries: they fold into one.
        try await upload(store, realm, file: a, versions: 3...3)
        let before = try await wholeHistory(store, realm.id)
        #expect(before.map(\.serverVersion) == [2, 3])
        let second = try await store.compact(realmID: realm.id, liveSince: at(1000)) { snapshot(of: $0) }
        #expect(second.compactedThrough == 3)
        #expect(second.removedEntries == 2)
        #expect(try await wholeHistory(store, realm.id) == [HistoryEntry(serverVersion: 3, changeset: snapshot(of: before))])
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: a, atOrBefore: 3) == 3)
        #expect(try await currentRealm(store, realm.id).compactedThrough == 3)
    }
}
