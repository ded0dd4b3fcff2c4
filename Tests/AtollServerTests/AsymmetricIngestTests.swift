import AtollCore
import AtollServer
import Foundation
import Testing

/// Asymmetric (data ingest) types against raw protocol clients: the server stores their objects,
/// never downloads them, refuses subscriptions to them, and refuses uploads that change or erase
/// them (`badChangeset`) while everything else carries on.
@Suite struct AsymmetricIngestTests {
    static let readingSchema = ObjectSchema(
        name: "Reading",
        properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true),
            Property(name: "celsius", type: .double),
        ],
        isAsymmetric: true)

    static func reading(_ key: String) -> ObjectID { ObjectID(type: "Reading", primaryKey: .string(key)) }

    static func createReading(_ key: String, _ celsius: Double, version: Int64) -> Changeset {
        Changeset(version: version, timestamp: 1_700_000_000_000 + version, instructions: [
            .addTable(readingSchema), .addTable(FlexibleAuthorizationTests.schema), .createObject(reading(key)),
            .set(reading(key), path: [.property("celsius")], value: .double(celsius)),
        ])
    }

    static func configuration() -> ServerConfiguration {
        TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "tasks", syncKind: .flexible, permissions: [.init(read: "true", write: "true")])]
        }
    }

    @Test func readingsAreStoredNeverDownloadedAndNeverChanged() async throws {
        try await withServer(Self.configuration()) { server in
            var sensor = try await FlexibleAuthorizationTests.Device.open(server)
            var reader = try await FlexibleAuthorizationTests.Device.open(server)
            try await sensor.upload(Self.createReading("r1", 21.5, version: 1), base: sensor.serverVersion)
            try await sensor.upload(Self.createReading("r2", 22.0, version: 2), base: sensor.serverVersion)
            #expect(sensor.errors.isEmpty, "\(sensor.errors)")
            // A task of the reader's, to see that its downloads flow.
            try await reader.upload(FlexibleAuthorizationTests.createTask("t", owner: reader.userID, title: "Ring", version: 1), base: reader.serverVersion)
            try await reader.sync(request: 50)
            #expect(reader.instructions(on: Self.reading("r1")).isEmpty)
            #expect(reader.instructions(on: Self.reading("r2")).isEmpty)

            // A subscription to the type is refused with a typed error.
            reader.client.send(.queryChange(QueryChange(session: reader.session, querySetVersion: 2,
                                                         queries: [TypeQuery(objectType: "Reading", query: "TRUEPREDICATE")])))
            let refused = try await reader.client.next { message -> QuerySetError? in if case .queryError(let e) = message { e } else { nil } }
            #expect(refused.message.contains("asymmetric"), "\(refused.message)")

            // Changing or erasing a stored reading: refused, nothing changes.
            for (what, instructions) in [
                ("a set", [Instruction.set(Self.reading("r1"), path: [.property("celsius")], value: .double(99))]),
                ("an erase", [Instruction.eraseObject(Self.reading("r2"))]),
            ] {
                var hostile = try await FlexibleAuthorizationTests.Device.open(server)
                hostile.client.send(.upload(Upload(session: hostile.session, changesets: [
                    UploadChangeset(Changeset(version: 1, timestamp: 1_700_000_000_100, instructions: instructions), lastServerVersion: hostile.serverVersion),
                ])))
                let answer = try await hostile.client.next { message -> ServerMessage? in
                    message.errorMessage != nil || message.uploadAck != nil ? message : nil
                }
                #expect(answer.errorMessage?.code == .badChangeset, "\(what): \(answer)")
                #expect(answer.errorMessage?.message.contains("asymmetric") == true, "\(what): \(answer)")
                await hostile.client.close()
            }

            // The server has both readings, unchanged (what an admin backup holds).
            let backup = try await server.running.coordinator.backup(appID: "tasks", path: nil, id: "ingest")
            let state = try #require(backup.realms.first { $0.path == "flx" }).state()
            #expect(state.object(Self.reading("r1"))?["celsius"] == .double(21.5))
            #expect(state.object(Self.reading("r2"))?["celsius"] == .double(22.0))
            #expect(state.schema["Reading"]?.isAsymmetric == true)
            for device in [sensor, reader] { await device.client.close() }
        }
    }

    @Test func partitionBasedSyncRefusesAsymmetricTypes() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let client = try await SyncTestClient.connect(to: server)
            _ = try await client.hello()
            _ = try #require(try await client.bind(1, partition: .string("home"), token: token).identAnswer)
            client.send(.upload(Upload(session: 1, changesets: [UploadChangeset(Changeset(version: 1, timestamp: 1_700_000_000_000, instructions: [
                .addTable(Self.readingSchema), .createObject(Self.reading("r1")),
            ]), lastServerVersion: 0)])))
            let refusal = try await client.next { $0.errorMessage }
            #expect(refusal.code == .badChangeset)
            #expect(refusal.message.contains("partition-based"), "\(refusal.message)")
            await client.close()
        }
    }

    @Test func theSchemaRulesOfAsymmetricTypes() throws {
        var history = HistorySchema()
        history.absorb(Changeset(version: 1, timestamp: 0, instructions: [.addTable(Self.readingSchema)]))
        // Created and set in one changeset: fine.
        try history.validate(Self.createReading("r1", 1, version: 2))
        // Declared the other way: refused.
        var symmetric = Self.readingSchema
        symmetric.isAsymmetric = false
        #expect(throws: MergeError.self) { try history.validate(Changeset(version: 3, timestamp: 0, instructions: [.addTable(symmetric)])) }
        // The flag survives the wire.
        let encoded = Changeset(version: 4, timestamp: 0, instructions: [.addTable(Self.readingSchema)]).encoded()
        #expect(try Changeset(decoding: encoded).instructions == [.addTable(Self.readingSchema)])
        // Links to asymmetric types, asymmetric types without a primary key or linking to top-level objects.
        let linking = ObjectSchema(name: "Holder", properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true),
            Property(name: "reading", type: .object, isOptional: true, objectType: "Reading"),
        ])
        #expect(throws: SchemaError.self) { _ = try Schema([Self.readingSchema, linking]) }
        let keyless = ObjectSchema(name: "Keyless", properties: [Property(name: "x", type: .int)], isAsymmetric: true)
        #expect(throws: SchemaError.self) { _ = try Schema([keyless]) }
        #expect(throws: Never.self) { _ = try Schema([Self.readingSchema]) }
    }
}
