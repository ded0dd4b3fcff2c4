import ArgumentParser
@_spi(Testing) import Atoll
@testable import AtollAdminClient
import AtollServer
import AtollTesting
import Foundation
import Testing
@testable import atoll

final class ImportedPerson: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
}

final class ImportedAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
}

final class ImportedTask: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted var priority = 0
    @Persisted var big = 0
    @Persisted var estimate = 0.0
    @Persisted var price: Decimal128
    @Persisted var due: Date?
    @Persisted var tag: UUID?
    @Persisted var tags: List<String>
    @Persisted var owner: ImportedPerson?
    @Persisted var address: ImportedAddress?
}

/// `atoll data import` / `export` against an in-process server, and a device that syncs the result.
@MainActor @Suite(.serialized) struct DataImportTests {
    func atoll(_ server: SyncTestServer, _ arguments: [String]) async throws {
        let options = ["--server", server.server.baseURL.absoluteString, "--admin-key=\(server.server.adminKey)"]
        var command = try AtollCommand.parseAsRoot(arguments + options)
        guard var runnable = command as? AsyncParsableCommand else { return try command.run() }
        try await runnable.run()
    }

    /// A device on partition `partition`, its schema uploaded (so the server's realm has the types).
    func device(_ server: SyncTestServer, _ name: String, partition: String) async throws -> Realm {
        let user = try await server.app(device: name).login(credentials: .anonymous)
        var configuration = user.configuration(partitionValue: partition)
        configuration.objectTypes = [ImportedTask.self, ImportedPerson.self, ImportedAddress.self]
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
        try await realm.syncSession!.wait(for: .upload)
        return realm
    }

    func write(_ lines: [String], jsonArray: Bool = false, in folder: TemporaryFolder, _ name: String) throws -> URL {
        let url = folder.url.appendingPathComponent(name)
        try MongoExportGenerator.file(lines, jsonArray: jsonArray).write(to: url)
        return url
    }

    @Test func importedDocumentsReachADeviceInTheirPartition() async throws {
        try await withSyncTestServer { server in
            let folder = try TemporaryFolder()
            let realm = try await device(server, "frodo", partition: "notes")
            let people = try write((0..<3).map(MongoExportGenerator.person), in: folder, "people.json")
            var tasks = (0..<20).map { MongoExportGenerator.task($0, format: $0 % 2 == 0 ? .relaxed : .canonical,
                                                                    partition: $0 < 15 ? "notes" : "other", owner: $0 % 4) }
            tasks.append(#"{"_id":{"$oid":"\#(MongoExportGenerator.objectId(900))"},"_partition":"notes","priority":"high"}"#)
            tasks.append(String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000))
            let file = try write(tasks, jsonArray: true, in: folder, "tasks.json")

            try await atoll(server, ["data", "import", "--app", server.appId, "--type", "ImportedPerson", "--realm", "s:notes", people.path])
            var run = DataImportRun(client: server.admin, app: server.appId, type: "ImportedTask", file: file)
            run.partitionKey = "_partition"
            run.batchSize = 4
            // Partition "other" has no device yet: its schema comes from the one that has.
            run.schema = try await server.admin.exportPage(app: server.appId, realm: "s:notes", type: nil).schema
            let report = try await run.run()

            #expect(report.read == 22)
            #expect(report.imported == 20)
            #expect(report.refusedCount == 2)
            #expect(report.refused.map(\.document) == [21, 22])
            #expect(report.refused.map(\.code) == ["wrongType", "tooDeep"])
            // Owner 3 was never imported, and partition "other" has no people: those links are
            // reported (and kept).
            #expect(report.unresolvedLinks == 8)
            #expect(report.realms == ["s:notes", "s:other"])
            #expect(report.finished)

            #expect(await waitUntil(timeout: .seconds(30)) { realm.refresh(); return realm.objects(ImportedTask.self).count == 15 })
            let task = try #require(realm.object(ofType: ImportedTask.self, forPrimaryKey: ObjectId(MongoExportGenerator.objectId(5))!))
            #expect(task.title == #"Task 5 "quoted" é"#)
            #expect(task.priority == 0 && task.big == 9_007_199_254_740_998 && task.estimate == 5.5)
            #expect(task.price == (try Decimal128(string: "5.25")))
            #expect(task.due == Date(timeIntervalSince1970: 1_700_000_005))
            #expect(task.tag == MongoExportGenerator.uuid(5))
            #expect(Array(task.tags) == ["t2", "all"])
            #expect(task.address?.street == "5 Main St")
            #expect(task.owner?.name == "Person 1")
            #expect(realm.objects(ImportedPerson.self).count == 3)
        }
    }

    @Test func anInterruptedImportResumesWithoutDuplicates() async throws {
        try await withSyncTestServer { server in
            let folder = try TemporaryFolder()
            let realm = try await device(server, "sam", partition: "notes")
            let file = try write((0..<30).map { MongoExportGenerator.task($0, format: .canonical) }, in: folder, "tasks.json")
            var run = DataImportRun(client: server.admin, app: server.appId, type: "ImportedTask", file: file)
            run.realm = "s:notes"
            run.batchSize = 4
            run.limit = 10
            let first = try await run.run()
            #expect(!first.finished)
            #expect(first.read == 10 && first.imported == 10)
            #expect(FileManager.default.fileExists(atPath: run.checkpointFile.path))

            // Killed after the checkpoint and before the next one: the batch after it is sent again.
            run.limit = nil
            run.resume = true
            let rest = try await run.run()
            #expect(rest.finished && rest.read == 30 && rest.imported == 30 && rest.refusedCount == 0)
            #expect(!FileManager.default.fileExists(atPath: run.checkpointFile.path))
            // Importing it all again changes nothing.
            run.resume = false
            _ = try await run.run()
            #expect(await waitUntil(timeout: .seconds(30)) { realm.refresh(); return realm.objects(ImportedTask.self).count == 30 })
            try await Task.sleep(for: .milliseconds(200))
            realm.refresh()
            #expect(realm.objects(ImportedTask.self).count == 30)
        }
    }

    @Test func exportThenImportIntoAFreshRealmGivesTheSameObjects() async throws {
        try await withSyncTestServer { server in
            let folder = try TemporaryFolder()
            _ = try await device(server, "pippin", partition: "notes")
            let file = try write((0..<12).map { MongoExportGenerator.task($0, format: .relaxed) }, in: folder, "tasks.json")
            var run = DataImportRun(client: server.admin, app: server.appId, type: "ImportedTask", file: file)
            run.realm = "s:notes"
            try await run.run()

            let out = folder.url.appendingPathComponent("export")
            try await atoll(server, ["data", "export", "--app", server.appId, "--realm", "s:notes", "--out", out.path])
            let exported = out.appendingPathComponent("s:notes")
            let lines = try String(contentsOf: exported.appendingPathComponent("ImportedTask.json"), encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 12)

            try await atoll(server, ["data", "import", "--app", server.appId, "--type", "ImportedTask", "--realm", "s:copy",
                                     "--schema", exported.appendingPathComponent("schema.json").path,
                                     exported.appendingPathComponent("ImportedTask.json").path])
            let original = try await server.admin.exportPage(app: server.appId, realm: "s:notes", type: "ImportedTask")
            let copy = try await server.admin.exportPage(app: server.appId, realm: "s:copy", type: "ImportedTask")
            #expect(copy.documents == original.documents)
            #expect(copy.documents.count == 12)

            // And through mongodump's BSON.
            let bsonOut = folder.url.appendingPathComponent("bson")
            try await atoll(server, ["data", "export", "--app", server.appId, "--realm", "s:notes", "--out", bsonOut.path, "--bson"])
            try await atoll(server, ["data", "import", "--app", server.appId, "--type", "ImportedTask", "--realm", "s:bsoncopy",
                                     "--schema", exported.appendingPathComponent("schema.json").path,
                                     bsonOut.appendingPathComponent("s:notes/ImportedTask.bson").path])
            let bsonCopy = try await server.admin.exportPage(app: server.appId, realm: "s:bsoncopy", type: "ImportedTask")
            #expect(bsonCopy.documents == original.documents)
        }
    }
}

extension DataImportTests {
    @Test func aMongodumpBSONFileImportsLikeItsExtendedJSON() async throws {
        try await withSyncTestServer { server in
            let folder = try TemporaryFolder()
            let realm = try await device(server, "merry", partition: "notes")
            let file = folder.url.appendingPathComponent("ImportedTask.bson")
            var bytes = try (0..<10).flatMap { MongoDumpGenerator.task($0, priceBytes: try Decimal128(string: "\($0).25").bsonBytes()) }
            bytes += MongoDumpGenerator.document([("_id", .objectId(Array(repeating: 9, count: 12))), ("when", .timestamp(1))])
            try Data(bytes).write(to: file)
            try await atoll(server, ["data", "import", "--app", server.appId, "--type", "ImportedTask", "--realm", "s:notes", file.path])
            #expect(await waitUntil(timeout: .seconds(30)) { realm.refresh(); return realm.objects(ImportedTask.self).count == 10 })
            let task = try #require(realm.object(ofType: ImportedTask.self, forPrimaryKey: ObjectId(MongoExportGenerator.objectId(4))!))
            #expect(task.price == (try Decimal128(string: "4.25")) && task.tag == MongoExportGenerator.uuid(4) && task.big == 9_007_199_254_740_997)
        }
    }
}

/// The import request's body, written by hand: what JSON makes of it is what was given.
@Suite struct ImportBodyTests {
    @Test func everyStringSurvivesTheBodyAsJSONReadsIt() throws {
        let documents = [
            #"{"_id": {"$oid": "5f1f0d1a2b3c4d5e6f708192"}, "title": "say \"hi\"\\ now"}"#,
            "tab\there, newline\nthere, CR\r, NUL \u{0}, bell \u{7}, escape \u{1B}, unit sep \u{1F}, DEL \u{7F}",
            "Grüße, 日本語, emoji 👩‍👩‍👧, combining e\u{301}",
            "",
        ]
        let schema = Data(#"[{"name": "Task", "properties": []}]"#.utf8)
        let body = try AdminClient.importBody(type: "Tâsk \"x\"", documents: documents, partitionKey: "owner\\id", realm: "s:a\nb", schema: schema)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["type"] as? String == "Tâsk \"x\"")
        #expect(object["documents"] as? [String] == documents)
        #expect(object["partitionKey"] as? String == "owner\\id")
        #expect(object["realm"] as? String == "s:a\nb")
        #expect((object["schema"] as? [[String: Any]])?.first?["name"] as? String == "Task")
        // Without the optional members, they are absent.
        let bare = try #require(try JSONSerialization.jsonObject(with: AdminClient.importBody(type: "T", documents: [], partitionKey: nil, realm: nil, schema: nil)) as? [String: Any])
        #expect(Set(bare.keys) == ["type", "documents"])
        // A schema that is not JSON is refused before anything is sent.
        #expect(throws: (any Error).self) { try AdminClient.importBody(type: "T", documents: [], partitionKey: nil, realm: nil, schema: Data("{".utf8)) }
    }
}
