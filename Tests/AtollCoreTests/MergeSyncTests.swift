@testable import AtollCore
import Testing

/// The server's and the client's halves of the merge: integration, acknowledgement, idempotency.
@Suite struct MergeSyncTests {
    let a = MergeFixture.id("a")
    func setCount(_ n: Int64, version: Int64, at t: Int64) -> Changeset {
        MergeFixture.changeset([.set(a, path: [.property("count")], value: .int(n))], version: version, timestamp: t)
    }

    @Test func aResentUploadIsAppliedOnce() throws {
        var history = ServerHistory()
        var client = ClientMerger(fileIdent: 1)
        client.recordLocal(MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(a)], version: 1, timestamp: 1))
        let batch = try #require(client.upload())
        #expect(try history.integrate(batch).count == 1)
        #expect(try history.integrate(batch).isEmpty, "the acknowledgement was lost; the re-sent upload is not applied again")
        #expect(history.version == 1)
        #expect(history.lastClientVersion(of: 1) == 1)
    }

    @Test func anUploadCarryingAnIntegratedChangesetIntegratesOnlyTheNewOnes() throws {
        var history = ServerHistory()
        var client = ClientMerger(fileIdent: 1)
        client.recordLocal(MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(a)], version: 1, timestamp: 1))
        try history.integrate(#require(client.upload()))
        client.recordLocal(setCount(3, version: 2, at: 2))
        let appended = try history.integrate(#require(client.upload()))
        #expect(appended.map(\.changeset.version) == [2])
    }

    @Test func theEchoOfAnOwnChangesetAcknowledgesIt() throws {
        var history = ServerHistory()
        var client = ClientMerger(fileIdent: 1)
        client.recordLocal(MergeFixture.changeset(MergeFixture.schemaInstructions, version: 1, timestamp: 1))
        try history.integrate(#require(client.upload()))
        #expect(client.receive(history.entries(after: 0)).isEmpty, "the client's own changeset is not applied twice")
        #expect(client.pending.isEmpty)
        #expect(client.serverVersion == 1)
        #expect(client.upload() == nil)
    }

    @Test func concurrentSetsConvergeOnTheLaterOneThroughTheServer() throws {
        var history = ServerHistory()
        var server = ReplicaState()
        var one = ClientMerger(fileIdent: 1), two = ClientMerger(fileIdent: 2)
        var s1 = ReplicaState(), s2 = ReplicaState()
        let setup = MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(a)], version: 1, timestamp: 1)
        s1.apply(setup)
        one.recordLocal(setup)
        for e in try history.integrate(#require(one.upload())) { server.apply(e.changeset) }
        s2.apply(two.receive(history.entries(after: 0)))
        _ = one.receive(history.entries(after: 0))
        // Both set `count` offline; two's write is later.
        let w1 = setCount(1, version: 2, at: 10), w2 = setCount(2, version: 1, at: 20)
        s1.apply(w1); one.recordLocal(w1)
        s2.apply(w2); two.recordLocal(w2)
        for e in try history.integrate(#require(two.upload())) { server.apply(e.changeset) }
        for e in try history.integrate(#require(one.upload())) { server.apply(e.changeset) }
        s1.apply(one.receive(history.entries(after: one.serverVersion)))
        s2.apply(two.receive(history.entries(after: two.serverVersion)))
        for s in [s1, s2, server] {
            #expect(s.value(a, [.property("count")]) == .int(2))
            #expect(s.canonicalDump() == server.canonicalDump())
        }
    }

    @Test func anUploadMissingAnOwnChangesetIntegratedAfterItsBaseIsRejected() throws {
        var history = ServerHistory()
        try history.integrate(UploadBatch(fileIdent: 1, baseServerVersion: 0, changesets: [MergeFixture.changeset(MergeFixture.schemaInstructions, version: 1)]))
        let bad = UploadBatch(fileIdent: 1, baseServerVersion: 0, changesets: [setCount(1, version: 2, at: 2)])
        #expect(throws: MergeError.self) { try history.integrate(bad) }
        let future = UploadBatch(fileIdent: 2, baseServerVersion: 9, changesets: [setCount(1, version: 1, at: 2)])
        #expect { try history.integrate(future) } throws: { ($0 as? MergeError)?.code == .badBaseVersion }
        let unordered = UploadBatch(fileIdent: 2, baseServerVersion: 0, changesets: [setCount(1, version: 2, at: 2), setCount(1, version: 1, at: 2)])
        #expect { try history.integrate(unordered) } throws: { ($0 as? MergeError)?.code == .nonIncreasingClientVersions }
    }

    @Test func aNewFileStartsFromTheSnapshotOfACompactedHistory() {
        var client = ClientMerger(fileIdent: 1)
        let snapshot = HistoryEntry(serverVersion: 40, changeset: MergeFixture.changeset(MergeFixture.schemaInstructions + [.createObject(a)], version: 0, file: 0))
        let next = HistoryEntry(serverVersion: 41, changeset: setCount(2, version: 7, at: 5).withFile(9))
        #expect(client.receive([snapshot, next]).count == 2)
        #expect(client.serverVersion == 41)
        // Only a file that has nothing yet, and only a server-made snapshot, may jump.
        var behind = ClientMerger(fileIdent: 1, serverVersion: 3)
        #expect(behind.receive([snapshot]).isEmpty)
        #expect(behind.serverVersion == 3)
        var fresh = ClientMerger(fileIdent: 1)
        #expect(fresh.receive([next]).isEmpty)
    }

    @Test func aDownloadWithAGapStopsAtTheGap() throws {
        var history = ServerHistory()
        for v in 1...3 {
            try history.integrate(UploadBatch(fileIdent: 9, baseServerVersion: history.version,
                                              changesets: [MergeFixture.changeset(MergeFixture.schemaInstructions, version: Int64(v))]))
        }
        var client = ClientMerger(fileIdent: 1)
        let entries = Array(history.entries(after: 0))
        #expect(client.receive([entries[0], entries[2]]).count == 1)
        #expect(client.serverVersion == 1)
        #expect(client.receive(entries).count == 2, "entries already integrated are skipped")
        #expect(client.serverVersion == 3)
    }

    @Test func thePureReceiveRebasesUnuploadedChanges() {
        let remote = HistoryEntry(serverVersion: 5, changeset: MergeFixture.changeset(
            [.listInsert(a, path: [.property("names")], index: 0, value: .string("r"))], version: 1, timestamp: 1, file: 2))
        let local = MergeFixture.changeset([.listInsert(a, path: [.property("names")], index: 0, value: .string("l"))], version: 3, timestamp: 2, file: 1)
        let (toApply, rebased) = ClientMerger.receive(download: [remote], unuploaded: [local], fileIdent: 1)
        #expect(toApply.map(\.instructions) == [[.listInsert(a, path: [.property("names")], index: 0, value: .string("r"))]])
        #expect(rebased.map(\.instructions) == [[.listInsert(a, path: [.property("names")], index: 1, value: .string("l"))]],
                "the earlier insert goes first; the later one shifts")
    }
}

private extension Changeset {
    func withFile(_ ident: Int64) -> Changeset {
        var changeset = self
        changeset.fileIdent = ident
        return changeset
    }
}
