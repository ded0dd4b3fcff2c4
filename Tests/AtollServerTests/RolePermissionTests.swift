import AtollCore
import AtollServer
import Foundation
import Testing

/// Roles (issue 24 §1): per type, the first rule whose `when` holds for the session's user; its
/// `insert`, `delete` and field permissions enforced on raw uploads, and fields it may not read
/// never sent. Raw protocol clients against a real server.
@Suite struct RolePermissionTests {
    typealias Device = FlexibleAuthorizationTests.Device
    static let writerEmail = "writer@example.com"

    /// "writer" (by e-mail) may do anything; everyone else is a "reader": reads every task, writes
    /// their own, may create but not delete, and may neither read nor write `title`.
    static func configuration(readerInsert: Bool = true) -> ServerConfiguration {
        TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "tasks", syncKind: .flexible, permissions: [
                .init(type: "Task", role: "writer", when: "%user.data.email == '\(writerEmail)'"),
                .init(type: "Task", role: "reader", read: "true", write: "owner == %user.id", insert: readerInsert, delete: false,
                      fields: FieldAccess(fields: ["title": .init(read: false, write: false)], otherFields: .init(read: true, write: true))),
            ])]
        }
    }

    static func writer(_ server: TestServer) async throws -> Device {
        _ = try await server.http.register(email: writerEmail, password: "a long enough password")
        let login = try await server.http.emailLogin(email: writerEmail, password: "a long enough password").decode(HTTP.Login.self)
        return try await Device.open(server, login: (login.user_id, login.access_token))
    }

    static let task = FlexibleAuthorizationTests.task
    static func create(_ key: String, owner: String, title: String, version: Int64) -> Changeset {
        FlexibleAuthorizationTests.createTask(key, owner: owner, title: title, version: version)
    }

    static func set(_ key: String, _ field: String, _ value: String, version: Int64) -> Changeset {
        Changeset(version: version, timestamp: 1_700_000_000_000 + version, instructions: [
            .set(task(key), path: [.property(field)], value: .string(value)),
        ])
    }

    @Test func aFieldTheRoleMayNotReadNeverReachesTheDevice() async throws {
        try await withServer(Self.configuration()) { server in
            var reader = try await Device.open(server)
            var writer = try await Self.writer(server)
            try await writer.upload(Self.create("x", owner: reader.userID, title: "the secret", version: 1), base: writer.serverVersion)
            try await writer.upload(Self.set("x", "title", "another secret", version: 2), base: writer.serverVersion)
            try await reader.sync(request: 7)
            let seen = reader.instructions(on: Self.task("x"))
            #expect(seen.contains(.set(Self.task("x"), path: [.property("owner")], value: .string(reader.userID))), "\(seen)")
            // A change of the title reaches the reader only as the reset to its default ("").
            let reset = Instruction.set(Self.task("x"), path: [.property("title")], value: .string(""))
            #expect(!seen.contains { $0.field == "title" && $0 != reset }, "the reader received the title: \(seen)")
            // A fresh device of the reader, caught up by a view change: no title either.
            let fresh = try await Device.open(server, sameUserAs: reader)
            #expect(!fresh.instructions(on: Self.task("x")).isEmpty)
            #expect(!fresh.instructions(on: Self.task("x")).contains { $0.field == "title" && $0 != reset })
            // The writer's role reads it.
            let other = try await Device.open(server, sameUserAs: writer)
            #expect(other.instructions(on: Self.task("x")).contains { $0.field == "title" })
            for device in [reader, writer, fresh, other] { await device.client.close() }
        }
    }

    @Test func aFieldTheRoleMayNotWriteIsReverted() async throws {
        try await withServer(Self.configuration()) { server in
            var reader = try await Device.open(server)
            // Its own task, title left at its initial value: allowed.
            try await reader.upload(Self.create("y", owner: reader.userID, title: "", version: 1), base: reader.serverVersion)
            #expect(reader.errors.isEmpty, "\(reader.errors)")
            try await reader.upload(Self.set("y", "title", "mine", version: 2), base: reader.serverVersion)
            #expect(reader.errors.contains { $0.code == .compensatingWrite && $0.message.contains("field title") }, "\(reader.errors)")
            // Creating one with a title is refused the same way.
            try await reader.upload(Self.create("z", owner: reader.userID, title: "set at creation", version: 3), base: reader.serverVersion)
            #expect(reader.errors.filter { $0.code == .compensatingWrite }.count == 2, "\(reader.errors)")
            // Other fields of its own task stay writable.
            let before = reader.errors.count
            try await reader.upload(Self.set("y", "owner", reader.userID, version: 4), base: reader.serverVersion)
            #expect(reader.errors.count == before)
            let writer = try await Self.writer(server)
            #expect(!writer.instructions(on: Self.task("y")).contains(.set(Self.task("y"), path: [.property("title")], value: .string("mine"))))
            #expect(writer.instructions(on: Self.task("z")).isEmpty)
            for device in [reader, writer] { await device.client.close() }
        }
    }

    @Test func aRoleWithoutDeleteCannotErase() async throws {
        try await withServer(Self.configuration()) { server in
            var reader = try await Device.open(server)
            try await reader.upload(Self.create("y", owner: reader.userID, title: "", version: 1), base: reader.serverVersion)
            try await reader.upload(Changeset(version: 2, timestamp: 1_700_000_000_002, instructions: [.eraseObject(Self.task("y"))]),
                                    base: reader.serverVersion)
            #expect(reader.errors.contains { $0.code == .compensatingWrite && $0.message.contains("may not delete") }, "\(reader.errors)")
            let writer = try await Self.writer(server)
            #expect(writer.instructions(on: Self.task("y")).contains(.createObject(Self.task("y"))), "the task is still there")
            for device in [reader, writer] { await device.client.close() }
        }
    }

    @Test func aRoleWithoutInsertCannotCreate() async throws {
        try await withServer(Self.configuration(readerInsert: false)) { server in
            var reader = try await Device.open(server)
            try await reader.upload(Self.create("y", owner: reader.userID, title: "", version: 1), base: reader.serverVersion)
            #expect(reader.errors.contains { $0.code == .compensatingWrite && $0.message.contains("may not create") }, "\(reader.errors)")
            var writer = try await Self.writer(server)
            #expect(writer.instructions(on: Self.task("y")).isEmpty)
            // The writer's role may.
            try await writer.upload(Self.create("w", owner: "someone", title: "t", version: 1), base: writer.serverVersion)
            #expect(writer.errors.isEmpty, "\(writer.errors)")
            for device in [reader, writer] { await device.client.close() }
        }
    }

    /// A type whose roles all fail to apply to a user is closed to that user.
    @Test func whenNoRoleAppliesTheTypeIsClosed() async throws {
        let configuration = TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "tasks", syncKind: .flexible, permissions: [
                .init(type: "Task", role: "writer", when: "%user.data.email == '\(Self.writerEmail)'"),
            ])]
        }
        try await withServer(configuration) { server in
            var writer = try await Self.writer(server)
            try await writer.upload(Self.create("x", owner: "w", title: "t", version: 1), base: writer.serverVersion)
            var stranger = try await Device.open(server)
            #expect(stranger.instructions(on: Self.task("x")).isEmpty)
            try await stranger.upload(Self.create("s", owner: stranger.userID, title: "", version: 1), base: stranger.serverVersion)
            #expect(stranger.errors.contains { $0.code == .compensatingWrite }, "\(stranger.errors)")
            for device in [writer, stranger] { await device.client.close() }
        }
    }

    @Test func rolesAreChosenFromTheUsersCustomDataAndProfile() {
        let app = ServerConfiguration.App(id: "a", permissions: [
            .init(type: "Task", role: "admin", when: "%user.custom_data.isAdmin == true", read: "true"),
            .init(type: "Task", role: "team", when: "%user.custom_data.team != nil", read: "team == %user.custom_data.team"),
            .init(type: "Task", role: "ops", when: "%user.data.email == 'ops@example.com'"),
            .init(type: nil, role: "everyone", read: "false"),
        ])
        let admin = RuleUser(id: "1", customData: ["isAdmin": .bool(true), "team": .string("blue")])
        #expect(app.rules(for: admin).map(\.role) == ["admin", "everyone"])
        let member = RuleUser(id: "2", customData: ["isAdmin": .bool(false), "team": .string("blue")])
        #expect(app.rules(for: member).map(\.role) == ["team", "everyone"])
        #expect(app.rules(for: RuleUser(id: "3", data: ["email": .string("ops@example.com")])).map(\.role) == ["ops", "everyone"])
        // No custom data: no role of Task applies, and Task is closed.
        let nobody = app.rules(for: RuleUser(id: "4"))
        #expect(nobody.first { $0.type == "Task" }.map { $0.read == "false" && $0.write == "false" && !$0.insert && !$0.delete } == true)
    }

    @Test func placeholdersBindTheUsersValues() throws {
        let schema = try Schema([ObjectSchema(name: "Task", properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true), Property(name: "team", type: .string)])])
        let user = RuleUser(id: "u", customData: ["org": .map(["team": .string("blue")])])
        let rule = try #require(FlexibleSync.Rules.bind("team == %user.custom_data.org.team", user: user, objectType: "Task", schema: schema))
        #expect(rule.evaluate(on: ["_id": .string("1"), "team": .string("blue")], resolver: NoLinkResolver()))
        #expect(!rule.evaluate(on: ["_id": .string("1"), "team": .string("red")], resolver: NoLinkResolver()))
        // A value the user does not have: the rule holds for nothing.
        #expect(FlexibleSync.Rules.bind("team == %user.custom_data.missing", user: user, objectType: "Task", schema: schema) == nil)
        #expect(!FlexibleSync.Rules.holds("%user.custom_data.missing == nil", for: user))
        #expect(FlexibleSync.Rules.holds("%user.id == 'u'", for: user))
    }
}
