extension ClientMessage {
    /// The message in its binary form (docs/protocol.md §2.3).
    package func encoded() -> [UInt8] {
        var w = BinaryWriter()
        switch self {
        case .hello(let m):
            w.byte(MessageTag.hello.rawValue)
            w.varint(UInt64(m.versions.lowerBound)); w.varint(UInt64(m.versions.upperBound))
            w.string(m.userAgent)
        case .bind(let m):
            w.byte(MessageTag.bind.rawValue); w.session(m.session)
            switch m.target {
            case .flexible: w.byte(0)
            case .partition(let p): w.byte(1); w.string(p.path)
            }
            w.string(m.accessToken)
        case .ident(let m):
            w.byte(MessageTag.ident.rawValue); w.session(m.session)
            w.fileIdent(m.fileIdent); w.int(m.lastServerVersion); w.epoch(m.epoch); w.int(m.querySetVersion)
        case .upload(let m):
            w.byte(MessageTag.upload.rawValue); w.session(m.session)
            w.varint(UInt64(m.changesets.count))
            for c in m.changesets { w.int(c.lastServerVersion); w.changeset(c.changeset) }
        case .mark(let m):
            w.byte(MessageTag.mark.rawValue); w.session(m.session); w.varint(m.requestID)
        case .queryChange(let m):
            w.byte(MessageTag.queryChange.rawValue); w.session(m.session); w.int(m.querySetVersion)
            w.varint(UInt64(m.queries.count))
            for q in m.queries { w.string(q.objectType); w.string(q.query) }
        case .refreshAccessToken(let m):
            w.byte(MessageTag.refreshAccessToken.rawValue); w.session(m.session); w.string(m.accessToken)
        case .unbind(let s):
            w.byte(MessageTag.unbind.rawValue); w.session(s)
        case .ping(let m):
            w.byte(MessageTag.ping.rawValue); w.int(m.timestamp); w.int(m.lastRoundTripMilliseconds)
        case .heldObjects(let m):
            w.byte(MessageTag.heldObjects.rawValue); w.session(m.session)
            // Grouped by type: (type, count, primary keys).
            let byType = Dictionary(grouping: m.objects, by: \.type)
            w.varint(UInt64(byType.count))
            for type in byType.keys.sorted() {
                w.string(type)
                w.varint(UInt64(byType[type]!.count))
                for id in byType[type]! { id.primaryKey.encode(into: &w) }
            }
        }
        return w.bytes
    }

    /// Decodes ``encoded()``.
    ///
    /// - Throws: ``ProtocolError`` with ``ServerErrorCode/unknownMessage`` for a tag that is not a
    ///   client message, ``ServerErrorCode/malformedMessage`` (naming the message and the byte) for
    ///   anything else wrong. Never traps.
    /// - Parameter maxElements: how many instructions and values the message may decode to in all
    ///   (the server's bound on what one message costs in memory); past it, `malformedMessage`.
    package init(decoding bytes: some Collection<UInt8>, maxElements: Int = .max) throws(ProtocolError) {
        self = try decodeMessage(bytes, fromServer: false, elementBudget: maxElements) { tag, r throws(DecodingFailure) in
            switch tag {
            case .hello:
                let low = try r.uint32(), high = try r.uint32()
                guard low <= high else { throw DecodingFailure("empty version range \(low)...\(high)") }
                return .hello(ClientHello(versions: low...high, userAgent: try r.string()))
            case .bind:
                let session = try r.session()
                let target: SyncTarget
                let at = r.offset
                switch try r.byte() {
                case 0: target = .flexible
                case 1:
                    let path = try r.string()
                    guard let value = PartitionValue(path: path) else {
                        throw DecodingFailure("bad realm path '\(path.prefix(40))' at byte \(at + 1)")
                    }
                    target = .partition(value)
                case let other: throw DecodingFailure("unknown sync target kind \(other) at byte \(at)")
                }
                return .bind(Bind(session: session, target: target, accessToken: try r.string()))
            case .ident:
                let session = try r.session(), file = try r.fileIdent(), version = try r.int()
                return .ident(Ident(session: session, fileIdent: file, lastServerVersion: version,
                                    epoch: try r.epoch(), querySetVersion: try r.int()))
            case .upload:
                let session = try r.session()
                let n = try r.count()
                var changesets: [UploadChangeset] = []
                changesets.reserveCapacity(n)
                for _ in 0..<n {
                    let base = try r.int()
                    changesets.append(UploadChangeset(try r.changeset(), lastServerVersion: base))
                }
                return .upload(Upload(session: session, changesets: changesets))
            case .mark:
                return .mark(Mark(session: try r.session(), requestID: try r.varint()))
            case .queryChange:
                let session = try r.session(), version = try r.int()
                let n = try r.count()
                var queries: [TypeQuery] = []
                for _ in 0..<n { queries.append(TypeQuery(objectType: try r.string(), query: try r.string())) }
                return .queryChange(QueryChange(session: session, querySetVersion: version, queries: queries))
            case .refreshAccessToken:
                return .refreshAccessToken(RefreshAccessToken(session: try r.session(), accessToken: try r.string()))
            case .unbind:
                return .unbind(try r.session())
            case .ping:
                return .ping(Ping(timestamp: try r.int(), lastRoundTripMilliseconds: try r.int()))
            case .heldObjects:
                let session = try r.session()
                var objects: [ObjectID] = []
                for _ in 0..<(try r.count()) {
                    let type = try r.string()
                    for _ in 0..<(try r.count()) { objects.append(ObjectID(type: type, primaryKey: try Value.decode(from: &r))) }
                }
                return .heldObjects(HeldObjects(session: session, objects: objects))
            default:
                throw DecodingFailure("server message tag \(tag.rawValue) sent by a client")  // unreachable: filtered above
            }
        }
    }
}

extension ClientMessage {
    /// Whether an encoded message may be decoded on a connection that has no bound session yet
    /// (read from the tag byte, without decoding the rest): the small messages of setting up and
    /// ending sessions, not uploads, query sets or held objects, which are refused undecoded.
    package static func isAllowedBeforeBind(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first, let tag = MessageTag(rawValue: first) else { return true }  // decoding reports it
        switch tag {
        case .hello, .bind, .ident, .mark, .ping, .unbind, .refreshAccessToken: return true
        default: return false
        }
    }
}
