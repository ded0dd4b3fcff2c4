import AtollCore
import AtollServer
import Foundation
import Testing

/// A flexible-sync session receives only what its user may read, whatever it claims to hold
/// (issue 10 §1): raw protocol clients against a real server whose read rule is
/// `owner == %user.id`.
@Suite struct FlexibleAuthorizationTests {
    static let schema = ObjectSchema(
        name: "Task",
        properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true),
            Property(name: "owner", type: .string),
            Property(name: "title", type: .string),
        ])

    static func configuration() -> ServerConfiguration {
        TestServer.configuration {
            $0.apps = [ServerConfiguration.App(
                id: "tasks", syncKind: .flexible,
                permissions: [.init(type: "Task", read: "owner == %user.id", write: "owner == %user.id")])]
        }
    }

    static func task(_ key: String) -> ObjectID { ObjectID(type: "Task", primaryKey: .string(key)) }

    static func createTask(_ key: String, owner: String, title: String, version: Int64) -> Changeset {
        Changeset(version: version, timestamp: 1_700_000_000_000 + version, instructions: [
            .addTable(schema), .createObject(task(key)),
            .set(task(key), path: [.property("owner")], value: .string(owner)),
            .set(task(key), path: [.property("title")], value: .string(title)),
        ])
    }

    /// A user's raw flexible session: bound, identified at `serverVersion`, holding `held`, with
    /// one query set (all tasks) sent.
    struct Device {
        let client: SyncTestClient
        let userID: String
        let token: String
        let session: SessionID = 1
        var fileIdent = FileIdent.unassigned
        var epoch = SyncEpoch.none
        /// The server version the last mark answer brought the device to.
        var serverVersion: Int64 = 0
        /// Every changeset downloaded so far.
        var downloaded: [DownloadChangeset] = []
        var errors: [ErrorMessage] = []

        /// A new anonymous user's device, or another device of the user of `sameUserAs`.
        static func open(_ server: TestServer, sameUserAs other: Device? = nil, held: [ObjectID] = [], serverVersion: Int64 = 0,
                         epoch: SyncEpoch = .none, login: (userID: String, token: String)? = nil) async throws -> Device
        {
            try await open(server.endpoint, sameUserAs: other, held: held, serverVersion: serverVersion, epoch: epoch, login: login)
        }

        /// The same, on a server of any kind (one in a child process, say).
        static func open(_ server: SyncEndpoint, sameUserAs other: Device? = nil, held: [ObjectID] = [], serverVersion: Int64 = 0,
                         epoch: SyncEpoch = .none, login: (userID: String, token: String)? = nil) async throws -> Device
        {
            let (userID, token): (String, String)
            if let login {
                (userID, token) = login
            } else if let other {
                (userID, token) = (other.userID, other.token)
            } else {
                let login = try await server.http.anonymousLogin()
                (userID, token) = (login.user_id, login.access_token)
            }
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            var device = Device(client: client, userID: userID, token: token)
            client.send(.bind(Bind(session: device.session, target: .flexible, accessToken: token)))
            client.send(.ident(Ident(session: device.session, fileIdent: .unassigned, lastServerVersion: serverVersion, epoch: epoch)))
            let answer = try await client.next()
            guard let ident = answer.identAnswer else { throw UnexpectedMessage(answer) }
            device.fileIdent = ident.fileIdent
            device.epoch = ident.epoch
            client.send(.heldObjects(HeldObjects(session: device.session, objects: held)))
            client.send(.queryChange(QueryChange(
                session: device.session, querySetVersion: 1, queries: [TypeQuery(objectType: "Task", query: "TRUEPREDICATE")])))
            try await device.sync(request: 1)
            return device
        }

        /// Handles what arrives until the answer to a new mark: then the device has everything.
        mutating func sync(request: UInt64) async throws {
            client.send(.mark(Mark(session: session, requestID: request)))
            while true {
                let message = try await client.next(timeout: .seconds(30))
                switch message {
                case .markAnswer(let answer) where answer.requestID == request:
                    serverVersion = answer.serverVersion
                    return
                case .download(let download): downloaded += download.changesets
                case .error(let error): errors.append(error)
                default: break
                }
            }
        }

        mutating func upload(_ changeset: Changeset, base: Int64) async throws {
            client.send(.upload(Upload(session: session, changesets: [UploadChangeset(changeset, lastServerVersion: base)])))
            try await sync(request: UInt64(changeset.version) + 100)
        }

        /// Every instruction this device received about `id`.
        func instructions(on id: ObjectID) -> [Instruction] {
            downloaded.flatMap(\.changeset.instructions).filter { $0.object == id }
        }
    }

    struct UnexpectedMessage: Error {
        let message: ServerMessage
        init(_ message: ServerMessage) { self.message = message }
    }

    /// B's task X, then A claims to hold X from version 0: nothing about X reaches A.
    @Test func claimingAnotherUsersObjectReceivesNothingOfIt() async throws {
        try await withServer(Self.configuration()) { server in
            var b = try await Device.open(server)
            try await b.upload(Self.createTask("x", owner: b.userID, title: "B's secret", version: 1), base: 0)
            try await b.upload(Changeset(version: 2, timestamp: 1_700_000_000_010, instructions: [
                .set(Self.task("x"), path: [.property("title")], value: .string("B's second secret")),
            ]), base: 0)

            let a = try await Device.open(server, held: [Self.task("x"), Self.task("later")])
            #expect(a.instructions(on: Self.task("x")).isEmpty, "A received \(a.instructions(on: Self.task("x")))")
            #expect(!a.downloaded.isEmpty, "A caught up (its query set was announced)")

            // A "later" object A claimed before it existed, created by B afterwards: still nothing.
            try await b.upload(Self.createTask("later", owner: b.userID, title: "B's third secret", version: 3), base: 0)
            var a2 = a
            try await a2.sync(request: 7)
            #expect(a2.instructions(on: Self.task("later")).isEmpty, "A received \(a2.instructions(on: Self.task("later")))")
            await a.client.close()
            await b.client.close()
        }
    }

    /// A claims to hold B's X from a later version (as if it had synced before): still nothing, not
    /// even an erasure, as X never changed since.
    @Test func claimingFromALaterVersionReceivesNothingEither() async throws {
        try await withServer(Self.configuration()) { server in
            var b = try await Device.open(server)
            try await b.upload(Self.createTask("x", owner: b.userID, title: "B's secret", version: 1), base: 0)
            let a = try await Device.open(server, held: [Self.task("x")], serverVersion: 1, epoch: b.epoch)
            #expect(a.instructions(on: Self.task("x")).isEmpty, "A received \(a.instructions(on: Self.task("x")))")
            await a.client.close()
            await b.client.close()
        }
    }

    /// A erases B's X: refused with a compensating write that carries none of X's fields to A,
    /// and X stays whole for B.
    @Test func aRefusedEraseOfAnUnreadableObjectLeaksNothing() async throws {
        try await withServer(Self.configuration()) { server in
            var b = try await Device.open(server)
            try await b.upload(Self.createTask("x", owner: b.userID, title: "B's secret", version: 1), base: 0)
            var a = try await Device.open(server)
            try await a.upload(Changeset(version: 1, timestamp: 1_700_000_000_100, instructions: [.eraseObject(Self.task("x"))]), base: 0)
            try await a.sync(request: 50)
            #expect(a.errors.contains { $0.code == .compensatingWrite }, "A was told its erase was reverted: \(a.errors)")
            let leaked = a.downloaded.filter { $0.originFileIdent != a.fileIdent.ident }.flatMap(\.changeset.instructions)
                .filter { $0.object == Self.task("x") }
            #expect(leaked.isEmpty, "A received \(leaked)")

            // B, on a fresh device, gets X whole.
            let fresh = try await Device.open(server, sameUserAs: b)
            let title = fresh.instructions(on: Self.task("x")).contains(.set(Self.task("x"), path: [.property("title")], value: .string("B's secret")))
            #expect(title, "B still has X: \(fresh.instructions(on: Self.task("x")))")
            await a.client.close()
            await b.client.close()
            await fresh.client.close()
        }
    }

    /// A refused erase of an object the user *may* read is put back on the client.
    @Test func aRefusedChangeOfAReadableObjectIsPutBack() async throws {
        let configuration = TestServer.configuration {
            $0.apps = [ServerConfiguration.App(
                id: "tasks", syncKind: .flexible, permissions: [.init(type: "Task", read: "true", write: "owner == %user.id")])]
        }
        try await withServer(configuration) { server in
            var b = try await Device.open(server)
            try await b.upload(Self.createTask("x", owner: b.userID, title: "public", version: 1), base: 0)
            var a = try await Device.open(server)
            #expect(!a.instructions(on: Self.task("x")).isEmpty, "A may read X")
            a.downloaded = []
            try await a.upload(Changeset(version: 1, timestamp: 1_700_000_000_100, instructions: [.eraseObject(Self.task("x"))]), base: a.serverVersion)
            try await a.sync(request: 50)
            #expect(a.errors.contains { $0.code == .compensatingWrite })
            let restored = a.downloaded.filter { $0.originFileIdent == WriteCheck.serverFileIdent }.flatMap(\.changeset.instructions)
            #expect(restored.contains(.createObject(Self.task("x"))), "the compensating write reached A: \(a.downloaded)")
            await a.client.close()
            await b.client.close()
        }
    }
}

/// A subscription query no parser could survive unbounded: refused as a query error (SDK code 10),
/// the server and the session carry on.
@Suite struct HostileQueryTests {
    @Test(arguments: [String(repeating: "!", count: 1_000_000) + "title == 'a'",
                      String(repeating: "(", count: 1_000_000) + "title == 'a'",
                      String(repeating: "NOT ", count: 200) + "title == 'a'"])
    func aQueryNestedTooDeeplyIsAQueryError(query: String) async throws {
        try await withServer(FlexibleAuthorizationTests.configuration()) { server in
            var b = try await FlexibleAuthorizationTests.Device.open(server)
            try await b.upload(FlexibleAuthorizationTests.createTask("x", owner: b.userID, title: "a", version: 1), base: 0)
            b.client.send(.queryChange(QueryChange(session: b.session, querySetVersion: 2, queries: [TypeQuery(objectType: "Task", query: query)])))
            let error = try await b.client.next { message -> QuerySetError? in
                if case .queryError(let error) = message { return error }
                return nil
            }
            #expect(error.querySetVersion == 2)
            #expect(error.message.contains("deeper than"), "\(error.message.prefix(200))")
            try await b.sync(request: 99)
            #expect(try await server.http.send("GET", "/health").status == 200)
            await b.client.close()
        }
    }
}
