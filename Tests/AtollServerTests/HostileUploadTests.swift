import AtollCore
import AtollServer
import Foundation
import Testing

/// Uploads no SDK would send: refused with a typed error (`badChangeset`, SDK code 4) while the
/// server and every other client carry on (issue 10 §2).
@Suite struct HostileUploadTests {
    static let tags: [PathElement] = [.property("tags")]

    static func listInsert(_ version: Int64, at index: Int, _ value: String) -> Changeset {
        SyncFixtures.changeset(version, timestamp: 1_700_000_000_000 + version, [
            .listInsert(SyncFixtures.task("t"), path: tags, index: index, value: .string(value)),
        ])
    }

    /// An upload that claims a base the history never had (the node then reads the store once to
    /// catch up to it) is refused with a typed error (`badServerVersion`); the server keeps
    /// serving the honest client.
    @Test(arguments: [Int64.max, 1_000, 2])
    func aBaseBeyondTheHistoryIsRefused(base: Int64) async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let honest = try await SyncTestClient.connect(to: server)
            let hostile = try await SyncTestClient.connect(to: server)
            for client in [honest, hostile] { _ = try await client.hello() }
            _ = try #require(try await honest.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await hostile.bind(1, partition: .string("home"), token: token).identAnswer)
            honest.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "a"), lastServerVersion: 0)])))
            #expect(try await honest.next { $0.uploadAck }.serverVersion == 1)

            let edit = SyncFixtures.changeset(1, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string("evil"))])
            hostile.send(.upload(Upload(session: 1, changesets: [UploadChangeset(edit, lastServerVersion: base)])))
            let refusal = try await hostile.next { $0.errorMessage }
            #expect(refusal.code == .badServerVersion, "\(refusal)")

            let next = SyncFixtures.changeset(2, [.set(SyncFixtures.task("t"), path: [.property("title")], value: .string("b"))])
            honest.send(.upload(Upload(session: 1, changesets: [UploadChangeset(next, lastServerVersion: 1)])))
            #expect(try await honest.next { $0.uploadAck }.serverVersion == 2)
            await honest.close()
            await hostile.close()
        }
    }

    /// Two clients insert into one list concurrently, one at `Int.max`: that upload is refused,
    /// the other integrates, and the server keeps serving.
    @Test(arguments: [Int.max, Int.min, -1, 2])
    func anOutOfRangeListIndexIsRefused(index: Int) async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let honest = try await SyncTestClient.connect(to: server)
            let hostile = try await SyncTestClient.connect(to: server)
            for client in [honest, hostile] { _ = try await client.hello() }
            _ = try #require(try await honest.bind(1, partition: .string("home"), token: token).identAnswer)
            _ = try #require(try await hostile.bind(1, partition: .string("home"), token: token).identAnswer)
            var created = SyncFixtures.createTask("t", title: "list")
            created.instructions.append(.listInsert(SyncFixtures.task("t"), path: Self.tags, index: 0, value: .string("a")))
            honest.send(.upload(Upload(session: 1, changesets: [UploadChangeset(created, lastServerVersion: 0)])))
            #expect(try await honest.next { $0.uploadAck }.serverVersion == 1)
            _ = try await hostile.downloads(1, through: 1)

            // Both on base 1, concurrently: the list has one element, so 2 is one past the end.
            hostile.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.listInsert(1, at: index, "evil"), lastServerVersion: 1)])))
            honest.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.listInsert(2, at: 1, "b"), lastServerVersion: 1)])))
            let refusal = try await hostile.next { $0.errorMessage }
            #expect(refusal.code == .badChangeset)
            #expect(refusal.message.contains("cannot apply"), "\(refusal.message)")
            #expect(try await honest.next { $0.uploadAck }.clientVersion == 2)

            // The honest client's next write integrates too, and a new client gets the whole list.
            honest.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Self.listInsert(3, at: 0, "c"), lastServerVersion: 1)])))
            #expect(try await honest.next { $0.uploadAck }.clientVersion == 3)
            let fresh = try await SyncTestClient.connect(to: server)
            _ = try await fresh.hello()
            let ident = try #require(try await fresh.bind(1, partition: .string("home"), token: token).identAnswer)
            var state = ReplicaState()
            for change in try await fresh.downloads(1, through: ident.latestServerVersion) { state.apply(SyncFixtures.entry(change).changeset) }
            #expect(state.object(SyncFixtures.task("t"))?["tags"] == .list([.string("c"), .string("a"), .string("b")]))
            for client in [honest, hostile, fresh] { await client.close() }
        }
    }

    /// Changes to objects that do not exist, unknown properties and oversized values are refused too.
    @Test func instructionsThatCannotApplyAreRefused() async throws {
        let cases: [(String, [Instruction])] = [
            ("a set on a missing object", [.set(SyncFixtures.task("nobody"), path: [.property("title")], value: .string("x"))]),
            ("an insert into a missing object's list", [.listInsert(SyncFixtures.task("nobody"), path: Self.tags, index: 0, value: .string("x"))]),
            ("an erase past the end", [.listErase(SyncFixtures.task("t"), path: Self.tags, index: 5)]),
            ("a move past the end", [.listMove(SyncFixtures.task("t"), path: Self.tags, from: 0, to: Int.max)]),
        ]
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let setup = try await SyncTestClient.connect(to: server)
            _ = try await setup.hello()
            _ = try #require(try await setup.bind(1, partition: .string("home"), token: token).identAnswer)
            setup.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.createTask("t", title: "x"), lastServerVersion: 0)])))
            _ = try await setup.next { $0.uploadAck }
            for (what, instructions) in cases {
                let client = try await SyncTestClient.connect(to: server)
                _ = try await client.hello()
                _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
                client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(SyncFixtures.changeset(1, instructions), lastServerVersion: 1)])))
                let answer = try await client.next { message -> ServerMessage? in
                    message.errorMessage != nil || message.uploadAck != nil ? message : nil
                }
                #expect(answer.errorMessage?.code == .badChangeset, "\(what): \(answer)")
                await client.close()
            }
            await setup.close()
        }
    }
}

/// What a message costs once decoded is bounded, whatever its size on the wire.
@Suite struct DecodedSizeTests {
    static func upload(instructions count: Int) -> ClientMessage {
        let id = SyncFixtures.task("t")
        let changeset = SyncFixtures.changeset(1, [.addTable(SyncFixtures.taskSchema), .createObject(id)]
            + (0..<count).map { .addInteger(id, path: [.property("count")], delta: Int64($0)) })
        return .upload(Upload(session: 1, changesets: [UploadChangeset(changeset, lastServerVersion: 0)]))
    }

    @Test func decodingCountsInstructionsAndValuesAgainstTheBudget() throws {
        let bytes = Self.upload(instructions: 100).encoded()
        _ = try ClientMessage(decoding: bytes, maxElements: 102 + 1)  // 102 instructions, 1 value (the schema has none)
        #expect(throws: ProtocolError.self) { try ClientMessage(decoding: bytes, maxElements: 50) }
        #expect { try ClientMessage(decoding: bytes, maxElements: 50) } throws: { error in
            (error as? ProtocolError)?.code == .malformedMessage
        }
    }

    @Test func anUploadDecodingPastTheLimitClosesTheConnectionAndTheServerGoesOn() async throws {
        let configuration = TestServer.configuration { $0.limits.maxDecodedElements = 1_000 }
        try await withServer(configuration) { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            client.send(Self.upload(instructions: 5_000))
            let error = try await client.next { $0.errorMessage }
            #expect(error.code == .malformedMessage)
            #expect(error.message.contains("limit"), "\(error.message)")
            // Within the limit, the same kind of upload integrates.
            let other = try await SyncTestClient.connect(to: server)
            _ = try await other.hello()
            _ = try #require(try await other.bind(1, partition: .string("home"), token: token).identAnswer)
            other.send(Self.upload(instructions: 500))
            #expect(try await other.next { $0.uploadAck }.clientVersion == 1)
            await client.close()
            await other.close()
        }
    }
}
