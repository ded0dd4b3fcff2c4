import AtollCore
import AtollServer
import Foundation
import Testing

@Suite("Sync endpoint: uploads, downloads and convergence")
struct SyncUploadTests {
    @Test func anUploadIsAcknowledgedAndReachesEveryDeviceOfThePartition() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let a = try await SyncTestClient.connect(to: server)
            let b = try await SyncTestClient.connect(to: server)
            let elsewhere = try await SyncTestClient.connect(to: server)
            for client in [a, b, elsewhere] { _ = try await client.hello() }
            let identA = try #require(try await a.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await b.bind(7, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await elsewhere.bind(1, partition: .string("work"), token: token).identAnswer)

            let created = SyncFixtures.createTask("t1", title: "Buy milk")
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(created, lastServerVersion: 0)])))
            let ack = try await a.next { $0.uploadAck }
            #expect(ack == UploadAck(session: 1, epoch: identA.epoch, clientVersion: 1, serverVersion: 1))

            let received = try #require(try await b.next().download)
            #expect(received.session == 7)
            #expect(received.epoch == identA.epoch)
            #expect(received.progress.serverVersion == 1)
            #expect(received.progress.latestServerVersion == 1)
            #expect(received.changesets.count == 1)
            let change = try #require(received.changesets.first)
            #expect(change.serverVersion == 1)
            #expect(change.originFileIdent == identA.fileIdent.ident)
            #expect(change.originTimestamp == created.timestamp)
            #expect(change.changeset.instructions == created.instructions)
            #expect(change.changeset.version == 1)

            // The uploader gets its own changeset back: the merge design's acknowledgement.
            let own = try await a.downloads(1, through: 1)
            #expect(own.map(\.originFileIdent) == [identA.fileIdent.ident])
            #expect(own.first?.lastClientVersion == 0)

            #expect(await elsewhere.staysQuiet(), "another partition hears nothing")
            for client in [a, b, elsewhere] { await client.close() }
        }
    }

    @Test func aReSentUploadIsIntegratedOnce() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let changesets = [
                SyncFixtures.createTask("t1", title: "Buy milk", version: 1),
                SyncFixtures.changeset(2, [.addInteger(SyncFixtures.task("t1"), path: [.property("count")], delta: 5)]),
            ]
            let upload = Upload(session: 1, changesets: changesets.map { UploadChangeset($0, lastServerVersion: 0) })

            let first = try await SyncTestClient.connect(to: server)
            _ = try await first.hello()
            let ident = try #require(try await first.bind(1, partition: .string("home"), token: token).identAnswer)
            first.send(.upload(upload))
            #expect(try await first.next { $0.uploadAck }.serverVersion == 2)
            await first.close()

            // The acknowledgement was "lost": the device reconnects and sends the same upload again.
            let again = try await SyncTestClient.connect(to: server)
            _ = try await again.hello()
            let reIdent = try #require(try await again.bind(
                1, partition: .string("home"), token: token, file: ident.fileIdent, serverVersion: 0, epoch: ident.epoch).identAnswer)
            #expect(reIdent.fileIdent == ident.fileIdent)
            #expect(reIdent.latestServerVersion == 2)
            let history = try await again.downloads(1, through: 2)
            #expect(history.map(\.serverVersion) == [1, 2])
            again.send(.upload(upload))
            let ack = try await again.next { $0.uploadAck }
            #expect(ack.clientVersion == 2)
            #expect(ack.serverVersion == 2, "nothing was appended")
            again.send(.mark(Mark(session: 1, requestID: 1)))
            let mark = try await again.next { $0.markAnswer }
            #expect(mark.serverVersion == 2)

            // A fresh device sees each changeset once.
            let fresh = try await SyncTestClient.connect(to: server)
            _ = try await fresh.hello()
            _ = try #require(try await fresh.bind(1, partition: .string("home"), token: token).identAnswer)
            let all = try await fresh.downloads(1, through: 2)
            #expect(all.map(\.changeset.version) == [1, 2])
            #expect(await fresh.staysQuiet())
            await again.close()
            await fresh.close()
        }
    }

    @Test func anUploadOnTopOfAnOwnChangesetNotYetDownloadedIsIntegrated() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            let t1 = SyncFixtures.task("t1")
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t1", title: "one"), lastServerVersion: 0)])))
            #expect(try await client.next { $0.uploadAck }.serverVersion == 1)
            // Version 2 was written on top of version 1 before version 1 came back: still base 0.
            let second = SyncFixtures.changeset(2, [.set(t1, path: [.property("title")], value: .string("two"))])
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(second, lastServerVersion: 0)])))
            let ack = try await client.next { $0.uploadAck }
            #expect(ack.clientVersion == 2)
            #expect(ack.serverVersion == 2)
            await client.close()
        }
    }

    @Test func anUploadMissingAnOwnChangesetAfterAnotherDevicesIsRetriedLater() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let a = try await SyncTestClient.connect(to: server)
            let b = try await SyncTestClient.connect(to: server)
            _ = try await a.hello()
            _ = try await b.hello()
            _ = try #require(try await a.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await b.bind(1, partition: .string("home"), token: token).identAnswer)
            b.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("b", title: "B"), lastServerVersion: 0)])))
            _ = try await b.next { $0.uploadAck }
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("a", title: "A"), lastServerVersion: 0)])))
            _ = try await a.next { $0.uploadAck }
            // A's version 2 claims base 0 without carrying version 1, which sits after B's entry.
            let second = SyncFixtures.changeset(2, [.set(SyncFixtures.task("a"), path: [.property("title")], value: .string("AA"))])
            a.send(.upload(Upload(session: 1, changesets: [UploadChangeset(second, lastServerVersion: 0)])))
            let error = try await a.next { $0.errorMessage }
            #expect(error.code == .badChangeset)
            #expect(error.action == .retryLater)
            #expect(error.session == 1)
            await a.close()
            await b.close()
        }
    }

    @Test func anUploadWithMixedBaseVersionsIsRefused() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            let changesets = [
                UploadChangeset(SyncFixtures.createTask("t1", title: "one"), lastServerVersion: 0),
                UploadChangeset(SyncFixtures.changeset(2, [.createObject(SyncFixtures.task("t2"))]), lastServerVersion: 1),
            ]
            client.send(.upload(Upload(session: 1, changesets: changesets)))
            let error = try await client.next { $0.errorMessage }
            #expect(error.code == .badChangeset)
            #expect(error.action == .protocolViolation)
            await client.close()
        }
    }

    /// A node checks an upload against what it knows of the realm (its schema, its state) without
    /// reading the store, unless the upload is based on a version it has not seen: here an append
    /// another node made (written to the store behind this node's back, its notification not heard)
    /// added the type the upload uses. The node reads up to the upload's base, and it goes in.
    @Test func anUploadUsingATypeAnotherNodeJustAddedIsAccepted() async throws {
        try await withServer { server in
            let coordinator = server.running.coordinator
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            let ident = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "first"), lastServerVersion: 0)])))
            #expect(try await client.next { $0.uploadAck }.serverVersion == 1)

            let realm = try await coordinator.realm(appID: "tasks", path: "s:home")
            let other = try await coordinator.store.newClientFile(realmID: realm.id, salt: 7, now: Date())
            let noteSchema = ObjectSchema(name: "Note", properties: [Property(name: "_id", type: .string, isPrimaryKey: true)])
            let note = ObjectID(type: "Note", primaryKey: .string("n"))
            _ = try await coordinator.store.integrate(realmID: realm.id, fileIdent: other.ident.ident, baseServerVersion: 1) { _ in
                [SyncFixtures.changeset(1, [.addTable(noteSchema), .createObject(note)])]
            }
            let edit = SyncFixtures.changeset(2, [.createObject(ObjectID(type: "Note", primaryKey: .string("m")))])
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(edit, lastServerVersion: 2)])))
            let answer = try await client.next { $0.uploadAck != nil || $0.errorMessage != nil ? $0 : nil }
            #expect(answer.uploadAck?.serverVersion == 3, "\(answer)")
            #expect(ident.fileIdent.ident != other.ident.ident)
            await client.close()
        }
    }

    @Test func anUploadThatBreaksTheSchemaIsRefusedAndTheServerServesOthers() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let good = try await SyncTestClient.connect(to: server)
            let bad = try await SyncTestClient.connect(to: server)
            for client in [good, bad] { _ = try await client.hello() }
            _ = try #require(try await good.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await bad.bind(1, partition: .string("home"), token: token).identAnswer)
            good.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t1", title: "one"), lastServerVersion: 0)])))
            _ = try await good.next { $0.uploadAck }

            // A string property set to an int: the realm's schema (from its history) says no.
            let wrongType = SyncFixtures.changeset(1, [.set(SyncFixtures.task("t1"), path: [.property("title")], value: .int(42))])
            bad.send(.upload(Upload(session: 1, changesets: [UploadChangeset(wrongType, lastServerVersion: 1)])))
            let error = try await bad.next { $0.errorMessage }
            #expect(error.code == .badChangeset)
            #expect(error.action == .protocolViolation)
            #expect(error.message.contains("Task.title is string, the upload gives a int"))
            let state = try await server.running.coordinator.store.latestServerVersion(
                realmID: try await server.running.coordinator.realm(appID: "tasks", path: PartitionValue.string("home").path).id)
            #expect(state == 1, "nothing of the refused upload was integrated")

            // The other client goes on syncing.
            let second = SyncFixtures.changeset(2, [.set(SyncFixtures.task("t1"), path: [.property("title")], value: .string("two"))])
            good.send(.upload(Upload(session: 1, changesets: [UploadChangeset(second, lastServerVersion: 1)])))
            let ack = try await good.next { $0.uploadAck }
            #expect(ack.serverVersion == 2)
            await good.close()
            await bad.close()
        }
    }

    @Test func twoDevicesUploadingConcurrentlyConverge() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            var replicas: [SyncReplica] = []
            for _ in 0..<2 {
                let client = try await SyncTestClient.connect(to: server)
                _ = try await client.hello()
                let ident = try #require(try await client.bind(1, partition: .string("shared"), token: token).identAnswer)
                replicas.append(SyncReplica(client: client, session: 1, fileIdent: ident.fileIdent.ident))
            }
            let t1 = SyncFixtures.task("t1")
            let base: Int64 = 1_700_000_000_000
            // Round 1: both create the same task offline, with different titles and tags.
            for (i, label) in ["A", "B"].enumerated() {
                replicas[i].commit([.addTable(SyncFixtures.taskSchema), .createObject(t1)], timestamp: base + Int64(i))
                replicas[i].commit([.set(t1, path: [.property("title")], value: .string("title \(label)"))], timestamp: base + 10 + Int64(i))
                replicas[i].commit([.listInsert(t1, path: [.property("tags")], index: 0, value: .string("tag \(label)"))], timestamp: base + 20 + Int64(i))
                replicas[i].commit([.addInteger(t1, path: [.property("count")], delta: Int64(i + 1))], timestamp: base + 30)
            }
            for replica in replicas { replica.upload() }
            // Round 2: more concurrent changes on top of whatever arrived meanwhile.
            for i in replicas.indices { try await replicas[i].drain() }
            for (i, label) in ["A", "B"].enumerated() {
                replicas[i].commit([.listInsert(t1, path: [.property("tags")], index: 0, value: .string("second \(label)"))], timestamp: base + 40 + Int64(i))
                replicas[i].commit([.set(t1, path: [.property("title")], value: .string("final \(label)"))], timestamp: base + 50 + Int64(i))
                replicas[i].commit([.addInteger(t1, path: [.property("count")], delta: 10)], timestamp: base + 60)
            }
            for replica in replicas { replica.upload() }
            for i in replicas.indices { try await replicas[i].waitForAcknowledgement() }
            for i in replicas.indices { try await replicas[i].sync(request: 1) }

            // The server's history, applied from version 0 by a new device.
            let observer = try await SyncTestClient.connect(to: server)
            _ = try await observer.hello()
            let ident = try #require(try await observer.bind(1, partition: .string("shared"), token: token).identAnswer)
            var serverState = ReplicaState()
            for change in try await observer.downloads(1, through: ident.latestServerVersion) {
                serverState.apply(SyncFixtures.entry(change).changeset)
            }
            for replica in replicas {
                #expect(replica.merger.pending.isEmpty)
                #expect(replica.merger.serverVersion == ident.latestServerVersion)
                #expect(replica.state.canonicalDump() == serverState.canonicalDump(),
                        "\(replica.state.canonicalDescription())\nvs the server's\n\(serverState.canonicalDescription())")
            }
            #expect(serverState.value(t1, [.property("count")]) == .int(23))
            #expect(serverState.value(t1, [.property("title")]) == .string("final B"))
            if case .list(let tags) = serverState.value(t1, [.property("tags")]) {
                #expect(tags.count == 4)
            } else {
                Issue.record("no tags")
            }
            for replica in replicas { await replica.client.close() }
            await observer.close()
        }
    }
}
