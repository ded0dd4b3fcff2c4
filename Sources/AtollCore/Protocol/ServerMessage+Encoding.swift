extension ServerMessage {
    /// The message in its binary form (docs/protocol.md §2.3).
    package func encoded() -> [UInt8] {
        var w = BinaryWriter()
        switch self {
        case .hello(let m):
            w.byte(MessageTag.serverHello.rawValue); w.varint(UInt64(m.version)); w.string(m.serverName)
        case .identAnswer(let m):
            w.byte(MessageTag.identAnswer.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.fileIdent(m.fileIdent); w.int(m.latestServerVersion)
        case .resetRequired(let m):
            w.byte(MessageTag.resetRequired.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.byte(m.reason.rawValue); w.bool(m.recoveryAllowed); w.string(m.message)
        case .uploadAck(let m):
            w.byte(MessageTag.uploadAck.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.int(m.clientVersion); w.int(m.serverVersion)
        case .download(let m):
            w.byte(MessageTag.download.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.int(m.progress.serverVersion); w.int(m.progress.latestServerVersion); w.varint(m.progress.downloadableBytes)
            w.int(m.querySetVersion); w.bool(m.isLastInBatch)
            w.varint(UInt64(m.changesets.count))
            for c in m.changesets {
                w.int(c.serverVersion); w.int(c.originFileIdent); w.int(c.originTimestamp); w.int(c.lastClientVersion)
                if let encoded = c.encodedChangeset { w.blob(encoded) } else { w.changeset(c.changeset) }
            }
        case .markAnswer(let m):
            w.byte(MessageTag.markAnswer.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.varint(m.requestID); w.int(m.serverVersion)
        case .queryError(let m):
            w.byte(MessageTag.queryError.rawValue); w.session(m.session); w.epoch(m.epoch)
            w.int(m.querySetVersion); w.string(m.message)
        case .unbound(let m):
            w.byte(MessageTag.unbound.rawValue); w.session(m.session); w.epoch(m.epoch)
        case .pong(let m):
            w.byte(MessageTag.pong.rawValue); w.int(m.timestamp)
        case .error(let m):
            w.byte(MessageTag.error.rawValue)
            w.varint(UInt64(m.code.rawValue)); w.byte(m.action.rawValue); w.string(m.message)
            w.int(m.tryAgainAfterMilliseconds)
            if let s = m.session { w.byte(1); w.session(s) } else { w.byte(0) }
            w.epoch(m.epoch)
            w.varint(UInt64(m.compensatingWrites.count))
            for c in m.compensatingWrites { w.string(c.objectType); c.primaryKey.encode(into: &w); w.string(c.reason) }
        }
        return w.bytes
    }

    /// Decodes ``encoded()``.
    ///
    /// - Throws: ``ProtocolError`` with ``ServerErrorCode/unknownMessage`` for a tag that is not a
    ///   server message, ``ServerErrorCode/malformedMessage`` (naming the message and the byte) for
    ///   anything else wrong. Never traps.
    package init(decoding bytes: some Collection<UInt8>) throws(ProtocolError) {
        self = try decodeMessage(bytes, fromServer: true) { tag, r throws(DecodingFailure) in
            switch tag {
            case .serverHello:
                return .hello(ServerHello(version: try r.uint32(), serverName: try r.string()))
            case .identAnswer:
                let session = try r.session(), epoch = try r.epoch(), file = try r.fileIdent()
                return .identAnswer(IdentAnswer(session: session, epoch: epoch, fileIdent: file, latestServerVersion: try r.int()))
            case .resetRequired:
                let session = try r.session(), epoch = try r.epoch()
                let reason = try r.enumeration(ResetReason.self, "reset reason")
                let recovery = try r.bool()
                return .resetRequired(ResetRequired(session: session, epoch: epoch, reason: reason,
                                                    recoveryAllowed: recovery, message: try r.string()))
            case .uploadAck:
                let session = try r.session(), epoch = try r.epoch(), client = try r.int()
                return .uploadAck(UploadAck(session: session, epoch: epoch, clientVersion: client, serverVersion: try r.int()))
            case .download:
                let session = try r.session(), epoch = try r.epoch()
                let progress = DownloadProgress(serverVersion: try r.int(), latestServerVersion: try r.int(),
                                                downloadableBytes: try r.varint())
                let queryVersion = try r.int(), last = try r.bool()
                let n = try r.count()
                var changesets: [DownloadChangeset] = []
                changesets.reserveCapacity(n)
                for _ in 0..<n {
                    let server = try r.int(), origin = try r.int(), timestamp = try r.int(), client = try r.int()
                    let (changeset, encoded) = try r.changesetAndEncoding()
                    changesets.append(DownloadChangeset(serverVersion: server, originFileIdent: origin, originTimestamp: timestamp,
                                                        lastClientVersion: client, changeset: changeset, encodedChangeset: encoded))
                }
                return .download(Download(session: session, epoch: epoch, changesets: changesets, progress: progress,
                                          querySetVersion: queryVersion, isLastInBatch: last))
            case .markAnswer:
                let session = try r.session(), epoch = try r.epoch(), request = try r.varint()
                return .markAnswer(MarkAnswer(session: session, epoch: epoch, requestID: request, serverVersion: try r.int()))
            case .queryError:
                let session = try r.session(), epoch = try r.epoch(), version = try r.int()
                return .queryError(QuerySetError(session: session, epoch: epoch, querySetVersion: version, message: try r.string()))
            case .unbound:
                return .unbound(Unbound(session: try r.session(), epoch: try r.epoch()))
            case .pong:
                return .pong(Pong(timestamp: try r.int()))
            case .error:
                let at = r.offset
                let rawCode = try r.varint()
                guard rawCode <= UInt64(UInt16.max), let code = ServerErrorCode(rawValue: UInt16(rawCode)) else {
                    throw DecodingFailure("unknown error code \(rawCode) at byte \(at)")
                }
                let action = try r.enumeration(ErrorAction.self, "error action")
                let message = try r.string(), delay = try r.int()
                let session: SessionID? = try r.bool() ? try r.session() : nil
                let epoch = try r.epoch()
                let n = try r.count()
                var writes: [CompensatingWrite] = []
                for _ in 0..<n {
                    let type = try r.string(), key = try Value.decode(from: &r)
                    writes.append(CompensatingWrite(objectType: type, primaryKey: key, reason: try r.string()))
                }
                return .error(ErrorMessage(code: code, message: message, action: action, tryAgainAfterMilliseconds: delay,
                                           session: session, epoch: epoch, compensatingWrites: writes))
            default:
                throw DecodingFailure("client message tag \(tag.rawValue) sent by a server")  // unreachable: filtered above
            }
        }
    }
}
