import AtollCore
@testable import AtollServer
import Foundation
import Testing

/// The fan-out encodes a realm's new entry once and sends those bytes to every session that may
/// read it whole; a session whose read rules change the entry gets its own encoding, and the
/// downloads of one fan-out to a connection's sessions leave in one write. Raw protocol clients
/// against a real server.
@Suite("Sync fan-out: shared encodings, batched writes")
struct FanOutSharingTests {
    static let writerEmail = "writer@example.com"

    /// One partition rule per role: the writer reads everything, everyone else reads all but `title`.
    static func configuration() -> ServerConfiguration {
        TestServer.configuration {
            $0.apps = [ServerConfiguration.App(id: "tasks", permissions: [
                .init(type: nil, role: "writer", when: "%user.data.email == '\(writerEmail)'"),
                .init(type: nil, role: "reader", read: "true", write: "true",
                      fields: FieldAccess(fields: ["title": .init(read: false, write: false)], otherFields: .init(read: true, write: true))),
            ])]
        }
    }

    static func writerToken(_ server: TestServer) async throws -> String {
        _ = try await server.http.register(email: writerEmail, password: "a long enough password")
        return try await server.http.emailLogin(email: writerEmail, password: "a long enough password").decode(HTTP.Login.self).access_token
    }

    static func contains(_ bytes: Data?, _ text: String) -> Bool {
        guard let bytes else { return false }
        return bytes.range(of: Data(text.utf8)) != nil
    }

    @Test func sessionsWithDifferentReadRulesOnOneRealmNeverGetEachOthersBytes() async throws {
        try await withServer(Self.configuration()) { server in
            let writerToken = try await Self.writerToken(server)
            let readerToken = try await SyncFixtures.accessToken(server)
            // The reader's session and a second writer device share one connection, so one
            // fan-out write carries both their downloads.
            let writer = try await SyncTestClient.connect(to: server)
            let shared = try await SyncTestClient.connect(to: server)
            for client in [writer, shared] { _ = try await client.hello() }
            _ = try #require(try await writer.bind(1, partition: .string("home"), token: writerToken).identAnswer)
            _ = try #require(try await shared.bind(2, partition: .string("home"), token: readerToken).identAnswer)
            _ = try #require(try await shared.bind(3, partition: .string("home"), token: writerToken).identAnswer)

            writer.send(.upload(Upload(session: 1, changesets: [
                UploadChangeset(SyncFixtures.createTask("t1", title: "the secret title"), lastServerVersion: 0),
            ])))
            _ = try await writer.next { $0.uploadAck }
            var downloads: [SessionID: [DownloadChangeset]] = [:]
            while downloads[2] == nil || downloads[3] == nil {
                let download = try await shared.next { $0.download }
                downloads[download.session, default: []] += download.changesets
            }
            let reader = try #require(downloads[2]?.first)
            let other = try #require(downloads[3]?.first)
            #expect(!Self.contains(reader.encodedChangeset, "the secret title"), "the reader received the title's bytes")
            #expect(!reader.changeset.instructions.contains { $0.field == "title" && $0 != .set(SyncFixtures.task("t1"), path: [.property("title")], value: .string("")) })
            #expect(Self.contains(other.encodedChangeset, "the secret title"), "the writer's other device reads the title")
            #expect(reader.encodedChangeset != other.encodedChangeset)
            // Each set of bytes is what encoding that session's changeset gives.
            #expect(reader.encodedChangeset == reader.changeset.encoded())
            #expect(other.encodedChangeset == other.changeset.encoded())
            for client in [writer, shared] { await client.close() }
        }
    }

    @Test func aSessionBehindGetsTheSameBytesAsOneKeepingUp() async throws {
        try await withServer { server in
            let token = try await SyncFixtures.accessToken(server)
            let writer = try await SyncTestClient.connect(to: server)
            let live = try await SyncTestClient.connect(to: server)
            for client in [writer, live] { _ = try await client.hello() }
            let ident = try #require(try await writer.bind(1, partition: .string("home"), token: token).identAnswer)
            // Ten sessions of one connection keep up with the fan-out.
            for id in 1...10 { _ = try #require(try await live.bind(SessionID(rawValue: UInt64(id)), partition: .string("home"), token: token).identAnswer) }
            var changesets = [SyncFixtures.createTask("t0", title: "first")]
            for version in 2...6 {
                changesets.append(SyncFixtures.changeset(Int64(version), [
                    .createObject(SyncFixtures.task("t\(version)")),
                    .set(SyncFixtures.task("t\(version)"), path: [.property("title")], value: .string("title \(version)")),
                ]))
            }
            for (i, changeset) in changesets.enumerated() {
                writer.send(.upload(Upload(session: 1, changesets: [UploadChangeset(changeset, lastServerVersion: Int64(i))])))
                _ = try await writer.next { $0.uploadAck }
            }
            var kept: [SessionID: [DownloadChangeset]] = [:]
            while kept.count < 10 || kept.values.contains(where: { $0.count < changesets.count }) {
                let download = try await live.next { $0.download }
                kept[download.session, default: []] += download.changesets
            }
            // A session that binds now catches up from the store.
            let behind = try await SyncTestClient.connect(to: server)
            _ = try await behind.hello()
            _ = try #require(try await behind.bind(1, partition: .string("home"), token: token).identAnswer)
            let caughtUp = try await behind.downloads(1, through: Int64(changesets.count))

            let reference = try #require(kept[1])
            #expect(reference.map(\.serverVersion) == Array(1...Int64(changesets.count)))
            for (id, received) in kept {
                #expect(received.map(\.serverVersion) == reference.map(\.serverVersion), "session \(id) out of order")
                #expect(received.map(\.encodedChangeset) == reference.map(\.encodedChangeset), "session \(id)")
            }
            #expect(caughtUp.map(\.encodedChangeset) == reference.map(\.encodedChangeset))
            // The bytes shared are those encoding each session's changeset gives (as per-session encoding did).
            for change in caughtUp {
                #expect(change.encodedChangeset == change.changeset.encoded())
                #expect(change.originFileIdent == ident.fileIdent.ident)
            }
            for client in [writer, live, behind] { await client.close() }
        }
    }

    @Test func changingAnEntrysChangesetForgetsItsBytes() {
        var entry = HistoryEntry(serverVersion: 3, changeset: SyncFixtures.createTask("t", title: "kept"))
        let bytes = entry.encodeOnce()
        #expect(entry.encodedChangeset == bytes)
        #expect(bytes == entry.changeset.encoded())
        entry.changeset.instructions.removeLast()
        #expect(entry.encodedChangeset == nil, "bytes of the unchanged changeset would leak what was removed")
        #expect(entry.encoded == entry.changeset.encoded())
        // Equality is the entry's content, not whether its bytes are known.
        #expect(HistoryEntry(serverVersion: 3, changeset: entry.changeset) == entry)
    }

    @Test func theOutboxTakesWholeMessagesAndEmpties() {
        var outbox = Outbox()
        #expect(outbox.isEmpty && !outbox.isFull)
        outbox.append([[1, 2], [3]])
        outbox.append([[4]])
        #expect(!outbox.isFull)
        #expect(outbox.take() == [[1, 2], [3], [4]])
        #expect(outbox.isEmpty)
        outbox.append(Array(repeating: [0], count: Outbox.maxFrames))
        #expect(outbox.isFull)
        outbox.append([[UInt8](repeating: 0, count: Outbox.maxBytes)])
        #expect(outbox.take().count == Outbox.maxFrames + 1)
        #expect(!outbox.isFull)
    }
}
