@_spi(Testing) import Atoll
@testable import AtollAdminClient
import AtollCore
@testable import AtollServer
import AtollTesting
import Foundation
import NIOCore
import Testing

/// The import's bulk path (one changeset per batch appended on the newest version, checked by
/// `ImportChangeset`, the compact body, the pipelined run) against the general upload path it replaced.
extension DataImportTests {
    /// A task as a device sees it, every field compared.
    private struct SeenTask: Hashable {
        var id, title: String, priority: Int, big: Int, estimate: Double, price: String, due: Date?, tag: UUID?
        var tags: [String], owner: String?, street: String?
        init(_ t: ImportedTask) {
            id = t._id.stringValue; title = t.title; priority = t.priority; big = t.big; estimate = t.estimate; price = "\(t.price)"
            due = t.due; tag = t.tag; tags = Array(t.tags); owner = t.owner?._id.stringValue; street = t.address?.street
        }
    }

    @Test func aBulkBatchEqualsWhatTheUploadPathWrites() async throws {
        try await withSyncTestServer { server in
            let coordinator = server.server.coordinator
            // Both realms get their schema from a device, as in the field.
            _ = try await device(server, "a", partition: "bulk")
            _ = try await device(server, "b", partition: "general")
            let schema = try await coordinator.exportDocuments(appID: server.appId, path: "s:bulk", type: nil, after: 0, limit: 1).schema
            let batches: [(String, [String])] = [
                ("ImportedPerson", (0..<3).map(MongoExportGenerator.person)),
                ("ImportedTask", (0..<30).map { MongoExportGenerator.task($0, format: $0 % 2 == 0 ? .relaxed : .canonical, owner: $0 % 4) }),
                // Objects already there are overwritten, lists replaced.
                ("ImportedTask", (20..<40).map { MongoExportGenerator.task($0 * 7, format: .canonical, owner: 1)
                    .replacingOccurrences(of: MongoExportGenerator.objectId($0 * 7), with: MongoExportGenerator.objectId($0)) }),
            ]
            let general = try await coordinator.realm(appID: server.appId, path: "s:general")
            let typing = DocumentTyping(schema: Dictionary(uniqueKeysWithValues: schema.map { ($0.name, $0) }))
            for (type, documents) in batches {
                let outcome = try await coordinator.importDocuments(appID: server.appId, DataImportRequest(type: type, documents: documents, realm: "s:bulk"))
                #expect(outcome.imported == documents.count && outcome.refused.isEmpty)
                // The general path: the same typed instructions as a client's upload (schema
                // check, rebase, validation against the state, then the state applied again).
                let instructions = try documents.flatMap { try typing.type(JSONNode.parse(Array($0.utf8)), as: type).instructions }
                let file = try await coordinator.store.newClientFile(realmID: general.id, salt: Int64.random(in: 1...Int64.max), now: Date())
                let base = try await coordinator.store.latestServerVersion(realmID: general.id)
                _ = try await coordinator.integrate(UploadBatch(fileIdent: file.ident.ident, baseServerVersion: base, changesets: [
                    Changeset(version: 1, timestamp: 1, fileIdent: file.ident.ident, instructions: instructions)]), into: general)
            }
            // The same history: each batch one entry with the same instructions.
            let bulkRealm = try await coordinator.realm(appID: server.appId, path: "s:bulk")
            let bulkHistory = try await coordinator.store.history(realmID: bulkRealm.id, after: 0, maxBytes: 64 << 20)
            let generalHistory = try await coordinator.store.history(realmID: general.id, after: 0, maxBytes: 64 << 20)
            #expect(bulkHistory.suffix(3).map(\.changeset.instructions) == generalHistory.suffix(3).map(\.changeset.instructions))
            #expect(bulkHistory.suffix(3).allSatisfy { $0.changeset.instructions.count >= 6 })
            // The same objects on the server.
            for type in ["ImportedTask", "ImportedPerson"] {
                let bulk = try await coordinator.exportDocuments(appID: server.appId, path: "s:bulk", type: type, after: 0, limit: 100).documents
                let upload = try await coordinator.exportDocuments(appID: server.appId, path: "s:general", type: type, after: 0, limit: 100).documents
                #expect(bulk == upload)
                #expect(bulk.count == (type == "ImportedTask" ? 40 : 3))
            }
            // And on devices that sync after.
            let fromBulk = try await device(server, "c", partition: "bulk")
            let fromUpload = try await device(server, "d", partition: "general")
            #expect(await waitUntil(timeout: .seconds(30)) {
                fromBulk.refresh(); fromUpload.refresh()
                return fromBulk.objects(ImportedTask.self).count == 40 && fromUpload.objects(ImportedTask.self).count == 40
            })
            let seenBulk = Set(fromBulk.objects(ImportedTask.self).map(SeenTask.init))
            let seenUpload = Set(fromUpload.objects(ImportedTask.self).map(SeenTask.init))
            #expect(seenBulk == seenUpload)
            let overwritten = try #require(fromBulk.object(ofType: ImportedTask.self, forPrimaryKey: ObjectId(MongoExportGenerator.objectId(25))!))
            #expect(overwritten.title == "Task 175 \"quoted\" é" && Array(overwritten.tags) == ["t1", "all"] && overwritten.owner?.name == "Person 1")
        }
    }

    @Test func plainDocumentsLeaveTheRealmsStateUnreadAndACachedStateStaysExact() async throws {
        try await withSyncTestServer { server in
            let coordinator = server.server.coordinator
            _ = try await device(server, "a", partition: "schema")
            let schema = try await coordinator.exportDocuments(appID: server.appId, path: "s:schema", type: nil, after: 0, limit: 1).schema
            func send(_ documents: [String]) async throws {
                let outcome = try await coordinator.importDocuments(appID: server.appId, DataImportRequest(
                    type: "ImportedTask", documents: documents, realm: "s:plain", schema: schema))
                #expect(outcome.imported == documents.count && outcome.refused.isEmpty)
            }
            // No links to look up: the import does not build the state of a realm no session reads.
            try await send((0..<20).map { MongoExportGenerator.task($0, format: .relaxed) })
            let realm = try await coordinator.realm(appID: server.appId, path: "s:plain")
            #expect(await coordinator.materialized[realm.id] == nil)
            // Links are looked up in the state; later batches (overwrites included) keep it in step
            // with the history, applied object by object.
            try await send((20..<40).map { MongoExportGenerator.task($0, format: .canonical, owner: $0 % 3) })
            #expect(await coordinator.materialized[realm.id] != nil)
            try await send((10..<30).map { MongoExportGenerator.task($0 * 3, format: .relaxed)
                .replacingOccurrences(of: MongoExportGenerator.objectId($0 * 3), with: MongoExportGenerator.objectId($0)) })
            let cached = try #require(await coordinator.materialized[realm.id]?.state)
            var rebuilt = ReplicaState()
            for entry in try await coordinator.store.history(realmID: realm.id, after: 0, maxBytes: 64 << 20) {
                for instruction in entry.changeset.instructions { rebuilt.apply(instruction) }
            }
            #expect(cached == rebuilt)
            #expect(cached.objects["ImportedTask"]?.count == 40)
        }
    }

    @Test func aBatchTypedInTwoHalvesWritesItsDocumentsInFileOrderAndRefusesEachBadOneAlone() async throws {
        try await withSyncTestServer { server in
            let coordinator = server.server.coordinator
            _ = try await device(server, "a", partition: "schema")
            let schema = try await coordinator.exportDocuments(appID: server.appId, path: "s:schema", type: nil, after: 0, limit: 1).schema
            // 500 documents (typed in two halves at once), bad ones in both halves and at their seam,
            // one `_id` twice (the later must win), into a realm that gets its schema from the request.
            let bad: Set<Int> = [0, 7, 249, 250, 251, 498]
            let documents = (0..<500).map { n in
                bad.contains(n) ? (n % 2 == 0 ? #"{"_id":{"$oid":"nope"}}"# : #"{"_id":{"$oid":"5f1f0d1a2b3c4d5e6f708192"},"priority":"high"}"#)
                    : n == 400 ? MongoExportGenerator.task(3, format: .canonical).replacingOccurrences(of: "Task 3", with: "Task 3 again")
                    : MongoExportGenerator.task(n, format: n % 3 == 0 ? .canonical : .relaxed)
            }
            let outcome = try await coordinator.importDocuments(appID: server.appId, DataImportRequest(
                type: "ImportedTask", documents: documents, realm: "s:halves", schema: schema))
            #expect(outcome.imported == 500 - bad.count)
            #expect(outcome.refused.map(\.index) == bad.sorted())
            let typing = DocumentTyping(schema: Dictionary(uniqueKeysWithValues: schema.map { ($0.name, $0) }))
            for refusal in outcome.refused {
                // Each refused with what typing it alone says.
                #expect(throws: refusal.error) { try typing.type(bytes: Array(documents[refusal.index].utf8), as: "ImportedTask") }
            }
            // One entry: the schema first, then each admitted document as typed alone, in file order.
            let realm = try await coordinator.realm(appID: server.appId, path: "s:halves")
            let history = try await coordinator.store.history(realmID: realm.id, after: 0, maxBytes: 64 << 20)
            let entry = try #require(history.last)
            let expected = try documents.indices.filter { !bad.contains($0) }.flatMap {
                try typing.type(bytes: Array(documents[$0].utf8), as: "ImportedTask").instructions
            }
            let schemaInstructions = entry.changeset.instructions.prefix { if case .addTable = $0 { true } else { false } }
            #expect(schemaInstructions.count == schema.count)
            #expect(Array(entry.changeset.instructions.dropFirst(schemaInstructions.count)) == expected)
            // The cached schema took in the request's types (read from the leading instructions
            // alone): a second batch is typed through them without the schema given again.
            let second = try await coordinator.importDocuments(appID: server.appId, DataImportRequest(
                type: "ImportedTask", documents: [MongoExportGenerator.task(9_000, format: .relaxed)], realm: "s:halves"))
            #expect(second.imported == 1 && second.refused.isEmpty)
            let exported = try await coordinator.exportDocuments(appID: server.appId, path: "s:halves", type: "ImportedTask", after: 0, limit: 1_000)
            #expect(exported.documents.count == 500 - bad.count - 1 + 1)
            #expect(exported.documents.filter { $0.contains("Task 3 again") }.count == 1)
            #expect(!exported.documents.contains { $0.contains(#"Task 3 \""#) })
        }
    }

    @Test func aKilledImportResumesFromItsCheckpoint() async throws {
        try await withSyncTestServer { server in
            let folder = try TemporaryFolder()
            let realm = try await device(server, "rosie", partition: "notes")
            let file = try write((0..<50).map { MongoExportGenerator.task($0, format: .relaxed) }, in: folder, "tasks.json")
            var run = DataImportRun(client: server.admin, app: server.appId, type: "ImportedTask", file: file)
            run.realm = "s:notes"
            run.batchSize = 5
            // Killed once the third batch is acknowledged (the fourth is read by then).
            let killed = run
            let first = Task.detached {
                try await killed.run { report in
                    if report.imported >= 15 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            await #expect(throws: CancellationError.self) { try await first.value }
            let checkpoint = try JSONDecoder().decode(DataImportRun.Checkpoint.self, from: Data(contentsOf: run.checkpointFile))
            #expect(checkpoint.report.imported == 15 && checkpoint.report.read == 15 && !checkpoint.report.finished)
            #expect(checkpoint.offset > 0)

            run.resume = true
            let rest = try await run.run()
            #expect(rest.finished && rest.read == 50 && rest.imported == 50 && rest.refusedCount == 0)
            #expect(rest.resumedAt == checkpoint.offset)
            #expect(!FileManager.default.fileExists(atPath: run.checkpointFile.path))
            #expect(await waitUntil(timeout: .seconds(30)) { realm.refresh(); return realm.objects(ImportedTask.self).count == 50 })
        }
    }

    @Test func aHostileImportBodyIsRefusedWithATypedError() async throws {
        try await withSyncTestServer { server in
            let admin = server.admin
            _ = try await device(server, "lobelia", partition: "notes")
            func send(_ bytes: [UInt8]) async -> AdminClientError? {
                do {
                    _ = try await admin.request("POST", "apps/\(server.appId)/data/import", body: ByteBuffer(bytes: bytes),
                                                contentType: DataImportBody.contentType)
                    return nil
                } catch {
                    return error as? AdminClientError
                }
            }
            let header = try AdminClient.importHeader(type: "ImportedTask", partitionKey: nil, realm: "s:notes", schema: nil)
            var good = DataImportBody.Writer(header: header)
            good.append(MongoExportGenerator.task(1, format: .relaxed).utf8)
            let goodBytes = good.finish()

            var tooMany = DataImportBody.Writer(header: header)
            for _ in 0...SyncCoordinator.maxImportBatch { tooMany.append("{}".utf8) }
            var deep = DataImportBody.Writer(header: Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8))
            deep.append("{}".utf8)
            var notAHeader = DataImportBody.Writer(header: Array(#"{"kind":"ImportedTask"}"#.utf8))
            notAHeader.append("{}".utf8)
            var lengthPastTheEnd = goodBytes
            lengthPastTheEnd[4 + 4 + header.count + 4] = 0x7F

            let cases: [(String, [UInt8], String)] = [
                ("JSON sent as the compact body", Array(#"{"type":"ImportedTask","documents":[]}"#.utf8), "malformedBody"),
                ("a cut body", Array(goodBytes.dropLast(3)), "malformedBody"),
                ("trailing bytes", goodBytes + [1, 2, 3], "malformedBody"),
                ("more documents than a batch holds", tooMany.finish(), "malformedBody"),
                ("a document length of 2 GB", lengthPastTheEnd, "tooLarge"),
                ("a header nested 500 deep", deep.finish(), "nests deeper"),
                ("a header without a type", notAHeader.finish(), "malformed import header"),
                ("a body over 16 MB", goodBytes + [UInt8](repeating: 0x20, count: 17 << 20), "larger than"),
            ]
            for (what, bytes, expected) in cases {
                let error = await send(bytes)
                #expect(error?.status == 400, "\(what)")
                #expect(error?.message.contains(expected) == true, "\(what): \(error?.message ?? "accepted")")
            }
            // A document that is not UTF-8 is refused alone, with its reason.
            var mixed = DataImportBody.Writer(header: header)
            mixed.append(Array(#"{"_id":{"$oid":"5f1f0d1a2b3c4d5e6f708192"},"title":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))
            mixed.append(MongoExportGenerator.task(2, format: .canonical).utf8)
            let answer = try await admin.importBatch(app: server.appId, body: mixed.finish())
            #expect(answer.imported == 1 && answer.refused.map(\.index) == [0] && answer.refused.first?.code == "malformedJSON")
            // The server is no worse for any of it.
            #expect(try await admin.importBatch(app: server.appId, body: goodBytes).imported == 1)
        }
    }
}
