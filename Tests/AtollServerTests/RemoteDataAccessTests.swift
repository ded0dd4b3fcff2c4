import AtollCore
import AtollServer
import Foundation
import Testing

/// Remote data access over raw HTTP (docs/protocol.md §1.6): the app's read and write rules apply
/// exactly as for sync, writes reach synced devices, and hostile requests get typed errors while
/// the server carries on. The app's read and write rule is `owner == %user.id`.
@Suite struct RemoteDataAccessTests {
    typealias Device = FlexibleAuthorizationTests.Device
    static let path = "/api/client/v1/app/tasks/mongodb/"

    static func body(_ members: String, collection: String = "Task", database: String = "tasks") -> String {
        #"{"database": "\#(database)", "collection": "\#(collection)"\#(members.isEmpty ? "" : ", " + members)}"#
    }

    static func call(_ server: TestServer, _ action: String, _ members: String = "", token: String?) async throws -> HTTP.Answer {
        try await server.http.send("POST", path + action, bearer: token, body: body(members))
    }

    /// A server whose app has a synced Task (owner "a-owner" of the device's user).
    static func withSyncedTask(_ body: (TestServer, inout Device) async throws -> Void) async throws {
        try await withServer(FlexibleAuthorizationTests.configuration()) { server in
            var device = try await Device.open(server)
            try await device.upload(FlexibleAuthorizationTests.createTask("a", owner: device.userID, title: "device's", version: 1),
                                    base: device.serverVersion)
            #expect(device.errors.isEmpty, "\(device.errors)")
            try await body(server, &device)
            await device.client.close()
        }
    }

    @Test func aUserReadsOnlyWhatSyncWouldLetItRead() async throws {
        try await Self.withSyncedTask { server, device in
            let other = try await server.http.anonymousLogin()
            let found = try await Self.call(server, "find", #""filter": {}"#, token: other.access_token)
            #expect(found.status == 200 && found.text == "[]", "\(found.text)")
            let own = try await Self.call(server, "find", #""filter": {"title": "device's"}"#, token: device.token)
            #expect(own.status == 200 && own.text.contains("device's"), "\(own.text)")
            let counted = try await Self.call(server, "count", #""filter": {"_id": "a"}"#, token: other.access_token)
            #expect(counted.text == "0")
        }
    }

    @Test func aUserCannotUpdateOrDeleteOthersDocuments() async throws {
        try await Self.withSyncedTask { server, device in
            let other = try await server.http.anonymousLogin()
            let update = try await Self.call(server, "updateOne", #""filter": {"_id": "a"}, "update": {"$set": {"title": "stolen"}}"#,
                                             token: other.access_token)
            #expect(update.status == 200 && update.object["matchedCount"] as? Int == 0, "\(update.text)")
            let delete = try await Self.call(server, "deleteMany", #""filter": {}"#, token: other.access_token)
            #expect(delete.object["deletedCount"] as? Int == 0, "\(delete.text)")
            // Inserting a document for someone else is refused: the write rule holds after the change.
            let forged = try await Self.call(server, "insertOne", #""document": {"_id": "f", "owner": "\#(device.userID)", "title": "x"}"#,
                                             token: other.access_token)
            #expect(forged.status == 403 && forged.object["remote_code"] as? String == "permissionDenied", "\(forged.text)")
            // And handing its own document to someone else.
            _ = try await Self.call(server, "insertOne", #""document": {"_id": "o", "owner": "\#(other.user_id)", "title": "x"}"#,
                                    token: other.access_token)
            let handed = try await Self.call(server, "updateOne", #""filter": {"_id": "o"}, "update": {"$set": {"owner": "\#(device.userID)"}}"#,
                                             token: other.access_token)
            #expect(handed.status == 403, "\(handed.text)")
            try await device.sync(request: 50)
            #expect(!device.instructions(on: FlexibleAuthorizationTests.task("a")).contains {
                $0 == .set(FlexibleAuthorizationTests.task("a"), path: [.property("title")], value: .string("stolen")) })
            #expect(device.instructions(on: FlexibleAuthorizationTests.task("f")).isEmpty)
        }
    }

    @Test func aWriteReachesTheSyncedDevice() async throws {
        try await Self.withSyncedTask { server, device in
            let update = try await Self.call(server, "updateOne", #""filter": {"_id": "a"}, "update": {"$set": {"title": "from afar"}}"#,
                                             token: device.token)
            #expect(update.object["modifiedCount"] as? Int == 1, "\(update.text)")
            let insert = try await Self.call(server, "insertOne", #""document": {"_id": "b", "owner": "\#(device.userID)", "title": "new"}"#,
                                             token: device.token)
            #expect(insert.text == #"{"insertedId":"b"}"#, "\(insert.text)")
            try await device.sync(request: 60)
            let a = FlexibleAuthorizationTests.task("a"), b = FlexibleAuthorizationTests.task("b")
            #expect(device.instructions(on: a).contains(.set(a, path: [.property("title")], value: .string("from afar"))))
            #expect(device.instructions(on: b).contains(.set(b, path: [.property("title")], value: .string("new"))))
        }
    }

    @Test func partitionBasedAppsAreRefused() async throws {
        let configuration = TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "tasks", syncKind: .partition)]
        }
        try await withServer(configuration) { server in
            let login = try await server.http.anonymousLogin()
            let answer = try await Self.call(server, "find", #""filter": {}"#, token: login.access_token)
            #expect(answer.status == 400 && answer.object["remote_code"] as? String == "unsupported", "\(answer.text)")
        }
    }

    @Test func hostileRequestsGetTypedErrors() async throws {
        try await Self.withSyncedTask { server, device in
            let token = device.token
            func expect(_ answer: HTTP.Answer, _ status: Int, _ code: String?, _ comment: Comment) {
                #expect(answer.status == status, "\(comment): \(answer.status) \(answer.text)")
                if let code { #expect(answer.object["remote_code"] as? String == code, "\(comment): \(answer.text)") }
            }
            expect(try await Self.call(server, "find", #""filter": {"$where": "sleep(1000)"}"#, token: token), 400, "unsupported", "$where")
            expect(try await Self.call(server, "find", #""filter": {"title": {"$regex": ".*"}}"#, token: token), 400, "unsupported", "$regex")
            expect(try await Self.call(server, "find", #""filter": {"title": {"$function": {}}}"#, token: token), 400, "unsupported", "$function")
            expect(try await Self.call(server, "mapReduce", #""filter": {}"#, token: token), 400, "unsupported", "unknown action")
            expect(try await Self.call(server, "find", #""filter": "owner == 'x'""#, token: token), 400, "badRequest", "a string filter")
            let deep = String(repeating: #"{"$or": ["#, count: 200) + "{}" + String(repeating: "]}", count: 200)
            expect(try await Self.call(server, "find", #""filter": \#(deep)"#, token: token), 413, "limitExceeded", "a deep filter")
            let wide = "[" + Array(repeating: "1", count: 50_000).joined(separator: ",") + "]"
            expect(try await Self.call(server, "find", #""filter": {"title": {"$in": \#(wide)}}"#, token: token), 413, "limitExceeded", "a huge $in")
            let huge = String(repeating: "x", count: 2 << 20)
            expect(try await Self.call(server, "insertOne", #""document": {"_id": "h", "title": "\#(huge)"}"#, token: token), 413, "limitExceeded",
                   "a 2 MB body")
            expect(try await server.http.send("POST", Self.path + "find", bearer: token, body: "not json"), 400, "badRequest", "not JSON")
            expect(try await server.http.send("POST", Self.path + "find", bearer: token, body: Self.body("", collection: "Secrets")), 404,
                   "collectionNotFound", "an unknown collection")
            expect(try await server.http.send("POST", Self.path + "find", bearer: token, body: Self.body("", database: "other-app")), 404,
                   "collectionNotFound", "another app's database")
            // A change stream is checked before it opens.
            expect(try await Self.call(server, "watch", #""filter": {"$where": "1"}"#, token: token), 400, "unsupported", "watch $where")
            expect(try await Self.call(server, "watch", #""filter": {"fullDocument.title": {"$regex": "x"}}"#, token: token), 400, "unsupported",
                   "watch $regex")
            expect(try await server.http.send("POST", Self.path + "watch", bearer: token, body: Self.body("", collection: "Secrets")), 404,
                   "collectionNotFound", "watch of an unknown collection")
            expect(try await Self.call(server, "watch", token: nil), 401, nil, "watch without a token")
            // Not logged in, a forged token, another app's token.
            expect(try await Self.call(server, "find", token: nil), 401, nil, "no token")
            expect(try await Self.call(server, "find", token: "e30.e30.e30"), 401, nil, "a forged token")
            let otherApp = try await server.http.anonymousLogin(app: "elsewhere")
            expect(try await Self.call(server, "find", token: otherApp.access_token), 401, nil, "another app's token")
            // The server carries on.
            let fine = try await Self.call(server, "count", #""filter": {}"#, token: token)
            #expect(fine.status == 200 && fine.text == "1", "\(fine.text)")
        }
    }
}
