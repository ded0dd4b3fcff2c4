import AtollCore
import Foundation

/// Shared pieces of the sync endpoint tests: a schema, changesets, a logged-in user.
enum SyncFixtures {
    static let taskSchema = ObjectSchema(
        name: "Task",
        properties: [
            Property(name: "_id", type: .string, isPrimaryKey: true),
            Property(name: "title", type: .string),
            Property(name: "count", type: .int),
            Property(name: "tags", type: .string, collection: .list),
        ])

    static func task(_ key: String) -> ObjectID { ObjectID(type: "Task", primaryKey: .string(key)) }

    static func changeset(_ version: Int64, timestamp: Int64 = 1_700_000_000_000, _ instructions: [Instruction]) -> Changeset {
        Changeset(version: version, timestamp: timestamp, instructions: instructions)
    }

    /// A changeset creating the schema and a task titled `title`.
    static func createTask(_ key: String, title: String, version: Int64 = 1, timestamp: Int64 = 1_700_000_000_000) -> Changeset {
        changeset(version, timestamp: timestamp, [
            .addTable(taskSchema), .createObject(task(key)),
            .set(task(key), path: [.property("title")], value: .string(title)),
        ])
    }

    /// An access token of a new anonymous user of `app`.
    static func accessToken(_ server: TestServer, app: String = "tasks") async throws -> String {
        try await server.http.anonymousLogin(app: app).access_token
    }

    /// The history entry a downloaded changeset stands for.
    static func entry(_ c: DownloadChangeset) -> HistoryEntry {
        var changeset = c.changeset
        changeset.fileIdent = c.originFileIdent
        return HistoryEntry(serverVersion: c.serverVersion, changeset: changeset)
    }
}

/// A device in the convergence tests: a `ClientMerger` and the `ReplicaState` it keeps, driven over a
/// real connection the way the client SDK is meant to (docs/merge.md): every upload carries all
/// pending changesets on top of the last integrated server version; downloads include the device's
/// own changesets, which acknowledge them.
struct SyncReplica {
    let client: SyncTestClient
    let session: SessionID
    var merger: ClientMerger
    var state = ReplicaState()
    var nextVersion: Int64 = 1

    init(client: SyncTestClient, session: SessionID, fileIdent: Int64) {
        self.client = client
        self.session = session
        merger = ClientMerger(fileIdent: fileIdent)
    }

    mutating func commit(_ instructions: [Instruction], timestamp: Int64) {
        let changeset = Changeset(version: nextVersion, timestamp: timestamp, fileIdent: merger.fileIdent, instructions: instructions)
        nextVersion += 1
        state.apply(changeset)
        merger.recordLocal(changeset)
    }

    /// Sends everything pending (nothing when nothing is).
    func upload() {
        guard let batch = merger.upload() else { return }
        client.send(.upload(Upload(
            session: session,
            changesets: batch.changesets.map { UploadChangeset($0, lastServerVersion: batch.baseServerVersion) })))
    }

    /// Handles one server message; fails on errors.
    mutating func receive(_ message: ServerMessage) throws {
        switch message {
        case .download(let download):
            for changeset in merger.receive(download.changesets.map(SyncFixtures.entry)) { state.apply(changeset) }
        case .error(let error):
            throw error.asTestFailure
        default:
            break
        }
    }

    /// Handles what the server sent before it answered a ping sent now (what arrived meanwhile).
    mutating func drain() async throws {
        var received: [ServerMessage] = []
        _ = try await client.pingRoundTrip { message in
            received.append(message)
            return true
        }
        for message in received { try receive(message) }
    }

    /// Handles what arrives until the server acknowledged every local changeset.
    mutating func waitForAcknowledgement() async throws {
        let newest = nextVersion - 1
        while true {
            let message = try await client.next()
            if let ack = message.uploadAck, ack.clientVersion >= newest { return }
            try receive(message)
        }
    }

    /// Sends a mark and handles what arrives until its answer: afterwards the replica holds everything
    /// the server had.
    mutating func sync(request: UInt64) async throws {
        client.send(.mark(Mark(session: session, requestID: request)))
        while true {
            let message = try await client.next()
            if case .markAnswer(let answer) = message, answer.requestID == request { return }
            try receive(message)
        }
    }
}

struct UnexpectedServerError: Error, CustomStringConvertible {
    let error: ErrorMessage
    var description: String { "server error \(error.code.rawValue) (\(error.code)): \(error.message)" }
}

extension ErrorMessage {
    var asTestFailure: UnexpectedServerError { UnexpectedServerError(error: self) }
}

extension ServerMessage {
    var serverHello: ServerHello? { if case .hello(let m) = self { m } else { nil } }
    var identAnswer: IdentAnswer? { if case .identAnswer(let m) = self { m } else { nil } }
    var resetRequired: ResetRequired? { if case .resetRequired(let m) = self { m } else { nil } }
    var uploadAck: UploadAck? { if case .uploadAck(let m) = self { m } else { nil } }
    var download: Download? { if case .download(let m) = self { m } else { nil } }
    var markAnswer: MarkAnswer? { if case .markAnswer(let m) = self { m } else { nil } }
    var unbound: Unbound? { if case .unbound(let m) = self { m } else { nil } }
    var pong: Pong? { if case .pong(let m) = self { m } else { nil } }
    var errorMessage: ErrorMessage? { if case .error(let m) = self { m } else { nil } }
}
