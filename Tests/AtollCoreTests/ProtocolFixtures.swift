import AtollCore
import Foundation

/// Sample messages and changesets shared by the protocol suites.
enum ProtocolFixtures {
    static let dog = ObjectID(type: "Dog", primaryKey: .objectId(ObjectId(bytes: Array(0..<12))))

    static func changeset(_ version: Int64, name: String = "Rex", fileIdent: Int64 = 7) -> Changeset {
        Changeset(version: version, timestamp: 1_700_000_000_000 + version, fileIdent: fileIdent, instructions: [
            .createObject(dog),
            .set(dog, path: [.property("name")], value: .string(name)),
            .listInsert(dog, path: [.property("tags")], index: 0, value: .string("good")),
        ])
    }

    static func serverChangeset(_ serverVersion: Int64, lastClientVersion: Int64 = 0) -> DownloadChangeset {
        DownloadChangeset(serverVersion: serverVersion, originFileIdent: 3, originTimestamp: 1_700_000_000_500,
                          lastClientVersion: lastClientVersion, changeset: changeset(serverVersion, name: "S\(serverVersion)", fileIdent: 3))
    }

    static let session: SessionID = 1

    static let clientMessages: [ClientMessage] = [
        .hello(ClientHello(versions: 1...3, userAgent: "Atoll/1.0 Linux")),
        .bind(Bind(session: 1, target: .partition(.string("tasks: Ann's")), accessToken: "eyJ.abc.def")),
        .bind(Bind(session: 2, target: .partition(.int(-42)), accessToken: "t")),
        .bind(Bind(session: 3, target: .partition(.objectId(ObjectId(bytes: Array(0..<12)))), accessToken: "t")),
        .bind(Bind(session: 4, target: .partition(.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)), accessToken: "t")),
        .bind(Bind(session: 5, target: .partition(.null), accessToken: "")),
        .bind(Bind(session: 6, target: .flexible, accessToken: "t")),
        .ident(Ident(session: 1, fileIdent: FileIdent(ident: 7, salt: -123_456_789), lastServerVersion: 12, epoch: 0xDEAD_BEEF_0000_0001, querySetVersion: 2)),
        .ident(Ident(session: 1, fileIdent: .unassigned, lastServerVersion: 0, epoch: .none)),
        .upload(Upload(session: 1, changesets: [UploadChangeset(changeset(1), lastServerVersion: 0), UploadChangeset(changeset(2), lastServerVersion: 5)])),
        .upload(Upload(session: 1, changesets: [])),
        .mark(Mark(session: 1, requestID: UInt64.max)),
        .queryChange(QueryChange(session: 6, querySetVersion: 3, queries: [
            TypeQuery(objectType: "Task", query: "owner == 'Ann' AND done == false"), TypeQuery(objectType: "Dog", query: "TRUEPREDICATE"),
        ])),
        .refreshAccessToken(RefreshAccessToken(session: 1, accessToken: "eyJ.new")),
        .unbind(1),
        .ping(Ping(timestamp: 1_700_000_000_123, lastRoundTripMilliseconds: 17)),
    ]

    static let serverMessages: [ServerMessage] = [
        .hello(ServerHello(version: 1, serverName: "atoll-server 0.1")),
        .identAnswer(IdentAnswer(session: 1, epoch: 5, fileIdent: FileIdent(ident: 7, salt: 99), latestServerVersion: 40)),
        .resetRequired(ResetRequired(session: 1, epoch: 6, reason: .historyRestored, recoveryAllowed: false, message: "restored from a backup")),
        .uploadAck(UploadAck(session: 1, epoch: 5, clientVersion: 9, serverVersion: 41)),
        .download(Download(session: 1, epoch: 5, changesets: [serverChangeset(41, lastClientVersion: 9), serverChangeset(42, lastClientVersion: 9)],
                           progress: DownloadProgress(serverVersion: 42, latestServerVersion: 50, downloadableBytes: 1234),
                           querySetVersion: 2, isLastInBatch: false)),
        .download(Download(session: 1, epoch: 5, changesets: [], progress: DownloadProgress(serverVersion: 0, latestServerVersion: 0, downloadableBytes: 0))),
        .markAnswer(MarkAnswer(session: 1, epoch: 5, requestID: 3, serverVersion: 42)),
        .queryError(QuerySetError(session: 6, epoch: 5, querySetVersion: 3, message: "field 'secret' of Task may not be queried")),
        .unbound(Unbound(session: 1, epoch: 5)),
        .pong(Pong(timestamp: -1)),
        .error(ErrorMessage(code: .unsupportedProtocolVersion, message: "server speaks 2...4")),
        .error(ErrorMessage(code: .tryAgainLater, message: "busy", tryAgainAfterMilliseconds: 30_000)),
        .error(ErrorMessage(code: .compensatingWrite, message: "write outside the view", session: 1, epoch: 5, compensatingWrites: [
            CompensatingWrite(objectType: "Task", primaryKey: .objectId(ObjectId(bytes: Array(repeating: 1, count: 12))), reason: "no write permission"),
            CompensatingWrite(objectType: "Dog", primaryKey: .int(3), reason: "outside subscriptions"),
        ])),
        .error(ErrorMessage(code: .permissionDenied, message: "no read permission", action: .deleteRealm, session: 2, epoch: 5)),
    ]
}
