import AtollCore
import AtollServer
import Testing

/// A realm's history: integration, paging, client versions, and integration from many clients at once.
extension StoreContract {
    /// `changeset` as the history keeps it: stamped with `fileIdent`.
    static func stamped(_ changeset: Changeset, _ fileIdent: Int64) -> Changeset {
        var changeset = changeset
        changeset.fileIdent = fileIdent
        return changeset
    }

    static func integrateAppendsStampedChangesets(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        let b = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(1)).ident.ident

        // The file ident in an uploaded changeset is the store's to set.
        let first = stamped(changeset("a1", version: 1), 42)
        let second = changeset("a2", version: 2)
        let result = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 0) { _ in [first, second] }
        let expected = [HistoryEntry(serverVersion: 1, changeset: stamped(first, a)), HistoryEntry(serverVersion: 2, changeset: stamped(second, a))]
        #expect(result.appended == expected)
        #expect(result.latestServerVersion == 2)
        #expect(result.lastIntegratedClientVersion == 2)
        #expect(result.rejected.isEmpty)
        #expect(try await wholeHistory(store, realm.id) == expected)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 2)
        #expect(try await store.clientFile(realmID: realm.id, ident: a)?.lastIntegratedClientVersion == 2)
        #expect(try await store.clientFile(realmID: realm.id, ident: b)?.lastIntegratedClientVersion == 0)

        let fromB = changeset("b1", version: 1)
        let onTop = try await store.integrate(realmID: realm.id, fileIdent: b, baseServerVersion: 2) { _ in [fromB] }
        #expect(onTop.appended == [HistoryEntry(serverVersion: 3, changeset: stamped(fromB, b))])
        #expect(onTop.latestServerVersion == 3)
        #expect(onTop.lastIntegratedClientVersion == 1)
        #expect(try await store.clientFile(realmID: realm.id, ident: b)?.lastIntegratedClientVersion == 1)

        // An upload integrated already appends nothing and changes nothing.
        let repeated = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 0) { _ in [] }
        #expect(repeated.appended == [])
        #expect(repeated.latestServerVersion == 3)
        #expect(repeated.lastIntegratedClientVersion == 2)
        #expect(try await wholeHistory(store, realm.id) == expected + onTop.appended)
        #expect(try await store.clientFile(realmID: realm.id, ident: a)?.lastIntegratedClientVersion == 2)
    }

    static func latestVersionsAreReadTogether(_ store: any ServerStore) async throws {
        let home = try await makeRealm(store)
        let other = try await store.realm(appID: appID, path: "s:other", creatingWith: epoch, now: at(0))
        let file = try await store.newClientFile(realmID: home.id, salt: 1, now: at(1)).ident.ident
        _ = try await store.integrate(realmID: home.id, fileIdent: file, baseServerVersion: 0) { _ in
            [changeset("a1", version: 1), changeset("a2", version: 2)]
        }
        let missing = max(home.id, other.id) + 1_000
        #expect(try await store.latestServerVersions(realmIDs: [home.id, other.id, missing]) == [home.id: 2, other.id: 0])
        #expect(try await store.latestServerVersions(realmIDs: []) == [:])
    }

    static func integrationInputDescribesTheHistory(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        let b = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(1)).ident.ident
        let seen = Recorded<IntegrationInput?>(nil)
        func integrate(_ file: Int64, base: Int64, after: Int64? = nil, _ changesets: [Changeset] = []) async throws -> IntegrationInput {
            seen.set(nil)
            _ = try await store.integrate(realmID: realm.id, fileIdent: file, baseServerVersion: base, historyAfter: after ?? base) { input in
                seen.set(input)
                return changesets
            }
            return try #require(seen.value)
        }

        let empty = try await integrate(a, base: 0, [changeset("a1", version: 1)])
        #expect(empty.historyAfterBase == [])
        #expect(empty.historyAfter == 0)
        #expect(empty.lastIntegratedClientVersion == 0)
        #expect(empty.latestServerVersion == 0)
        #expect(empty.epoch == epoch)
        #expect(empty.compactedThrough == 0)

        _ = try await integrate(a, base: 1, [changeset("a2", version: 2), changeset("a3", version: 3)])
        let history = try await wholeHistory(store, realm.id)
        #expect(history.map(\.serverVersion) == [1, 2, 3])

        let fromBase = try await integrate(b, base: 1)
        #expect(fromBase.historyAfterBase == Array(history[1...]))
        #expect(fromBase.historyAfter == 1)
        #expect(fromBase.lastIntegratedClientVersion == 0, "b's, not a's")
        #expect(fromBase.latestServerVersion == 3)
        #expect(fromBase.epoch == epoch)

        let rebased = try await integrate(b, base: 1, after: 2)
        #expect(rebased.historyAfterBase == [history[2]])
        #expect(rebased.historyAfter == 2)
        #expect(rebased.latestServerVersion == 3)

        let upToDate = try await integrate(a, base: 3)
        #expect(upToDate.historyAfterBase == [])
        #expect(upToDate.historyAfter == 3)
        #expect(upToDate.lastIntegratedClientVersion == 3)
        #expect(upToDate.latestServerVersion == 3)
    }

    static func serverAuthoredChangesetsAreNotTheUploaders(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        let upload = changeset("a1", version: 1)
        // A compensating write: the server's own, with a client version above the upload's.
        let compensation = Changeset(version: 9, timestamp: 1_700_000_000_500, fileIdent: IntegrationInput.serverAuthored, instructions: [
            .set(task("a1"), path: [.property("title")], value: .string("put back")),
        ])

        let result = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 0) { _ in [upload, compensation] }
        let expected = [
            HistoryEntry(serverVersion: 1, changeset: stamped(upload, a)),
            HistoryEntry(serverVersion: 2, changeset: stamped(compensation, WriteCheck.serverFileIdent)),
        ]
        #expect(result.appended == expected)
        #expect(result.latestServerVersion == 2)
        #expect(result.lastIntegratedClientVersion == 1)
        #expect(try await wholeHistory(store, realm.id) == expected)
        #expect(try await store.clientFile(realmID: realm.id, ident: a)?.lastIntegratedClientVersion == 1)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: a, atOrBefore: 2) == 1)

        // A compensating write alone is not the uploader's either.
        let alone = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 2) { _ in [compensation] }
        #expect(alone.appended == [HistoryEntry(serverVersion: 3, changeset: stamped(compensation, WriteCheck.serverFileIdent))])
        #expect(alone.latestServerVersion == 3)
        #expect(alone.lastIntegratedClientVersion == 1)
        #expect(try await store.clientFile(realmID: realm.id, ident: a)?.lastIntegratedClientVersion == 1)
        #expect(try await store.lastClientVersion(realmID: realm.id, fileIdent: a, atOrBefore: 3) == 1)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 3)
    }

    static func failedIntegrationWritesNothing(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...1)
        let before = try await wholeHistory(store, realm.id)

        await #expect(throws: Refused.self) {
            _ = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 1) { _ in throw Refused() }
        }
        #expect(try await wholeHistory(store, realm.id) == before)
        #expect(try await store.latestServerVersion(realmID: realm.id) == 1)
        #expect(try await store.clientFile(realmID: realm.id, ident: a)?.lastIntegratedClientVersion == 1)

        // The next upload follows on without a gap.
        let next = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 1) { _ in [changeset("a2", version: 2)] }
        #expect(next.appended.map(\.serverVersion) == [2])
    }

    static func historyIsPagedByBytes(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...3)
        let all = try await wholeHistory(store, realm.id)
        #expect(all.map(\.serverVersion) == [1, 2, 3])
        let sizes = all.map { $0.changeset.encoded().count }

        func page(after: Int64 = 0, _ maxBytes: Int) async throws -> [Int64] {
            try await store.history(realmID: realm.id, after: after, maxBytes: maxBytes).map(\.serverVersion)
        }
        #expect(try await page(0) == [1], "at least one entry")
        #expect(try await page(1) == [1])
        #expect(try await page(sizes[0]) == [1], "stops once maxBytes is reached")
        #expect(try await page(sizes[0] + 1) == [1, 2], "the entry that reaches maxBytes is included")
        #expect(try await page(sizes[0] + sizes[1]) == [1, 2])
        #expect(try await page(sizes[0] + sizes[1] + 1) == [1, 2, 3])
        #expect(try await page(after: 1, 1) == [2])
        #expect(try await page(after: 1, sizes[1] + sizes[2]) == [2, 3])
        #expect(try await page(after: 2, .max) == [3])
        #expect(try await page(after: 3, .max) == [])
        #expect(try await store.history(realmID: realm.id, after: 1, maxBytes: .max) == Array(all[1...]))
    }

    static func lastClientVersionCountsUpToAServerVersion(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let a = try await store.newClientFile(realmID: realm.id, salt: 1, now: at(1)).ident.ident
        let b = try await store.newClientFile(realmID: realm.id, salt: 2, now: at(1)).ident.ident
        try await upload(store, realm, file: a, versions: 1...1)  // 1
        try await upload(store, realm, file: b, versions: 1...1)  // 2
        _ = try await store.integrate(realmID: realm.id, fileIdent: a, baseServerVersion: 2) { _ in  // 3, 4
            [changeset("a2", version: 2), changeset("a3", version: 3)]
        }
        func last(_ file: Int64, _ serverVersion: Int64) async throws -> Int64 {
            try await store.lastClientVersion(realmID: realm.id, fileIdent: file, atOrBefore: serverVersion)
        }
        var ofA: [Int64] = []
        var ofB: [Int64] = []
        for serverVersion in Int64(0)...5 {
            ofA.append(try await last(a, serverVersion))
            ofB.append(try await last(b, serverVersion))
        }
        #expect(ofA == [0, 1, 1, 2, 3, 3])
        #expect(ofB == [0, 0, 1, 1, 1, 1])
        #expect(try await last(99, 4) == 0, "an unknown file integrated nothing")
    }

    /// 8 client files upload 5 changesets each, one upload at a time per file and all files at
    /// once: one history of versions 1...40, each changeset in it once. What a store with several
    /// writers (server nodes) must keep.
    static func concurrentIntegrationKeepsOneGaplessHistory(_ store: any ServerStore) async throws {
        let realm = try await makeRealm(store)
        let realmID = realm.id
        let uploads: Int64 = 5
        var files: [Int64] = []
        for i in 0..<8 { files.append(try await store.newClientFile(realmID: realmID, salt: Int64(i), now: at(i)).ident.ident) }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for file in files {
                group.addTask {
                    for version in 1...uploads {
                        let base = try await store.latestServerVersion(realmID: realmID)
                        let changeset = changeset("f\(file)v\(version)", version: version)
                        let result = try await store.integrate(realmID: realmID, fileIdent: file, baseServerVersion: base) { input in
                            // What the integration reads is one consistent view of the history.
                            let expected = input.latestServerVersion > base ? Array((base + 1)...input.latestServerVersion) : []
                            let got = input.historyAfterBase.map(\.serverVersion)
                            guard got == expected, input.lastIntegratedClientVersion == version - 1 else {
                                throw ContractViolation("""
                                    file \(file) upload \(version) on base \(base): history after base \(got), latest \
                                    \(input.latestServerVersion), last client version \(input.lastIntegratedClientVersion)
                                    """)
                            }
                            return [changeset]
                        }
                        guard result.appended.count == 1, result.appended[0].serverVersion == result.latestServerVersion,
                              result.appended[0].changeset == stamped(changeset, file), result.lastIntegratedClientVersion == version
                        else { throw ContractViolation("file \(file) upload \(version): \(result.appended), latest \(result.latestServerVersion)") }
                    }
                }
            }
            try await group.waitForAll()
        }

        let total = Int64(files.count) * uploads
        let history = try await wholeHistory(store, realmID)
        #expect(history.map(\.serverVersion) == Array(1...total), "no gap, no duplicate")
        #expect(try await store.latestServerVersion(realmID: realmID) == total)
        let uploaded = history.map { "\($0.changeset.fileIdent):\($0.changeset.version)" }
        #expect(Set(uploaded) == Set(files.flatMap { file in (1...uploads).map { "\(file):\($0)" } }), "every upload once")
        #expect(uploaded.count == Int(total))
        for file in files {
            #expect(history.filter { $0.changeset.fileIdent == file }.map(\.changeset.version) == Array(1...uploads), "file \(file) in order")
            #expect(try await store.clientFile(realmID: realmID, ident: file)?.lastIntegratedClientVersion == uploads)
            #expect(try await store.lastClientVersion(realmID: realmID, fileIdent: file, atOrBefore: total) == uploads)
        }
    }
}

