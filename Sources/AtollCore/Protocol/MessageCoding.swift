import Foundation

/// Message tags: the first byte of every encoded message. Client tags are below 0x80, server tags
/// above, so a message sent the wrong way is refused as unknown.
enum MessageTag: UInt8 {
    case hello = 0x01, bind, ident, upload, mark, queryChange, refreshAccessToken, unbind, ping, heldObjects
    case serverHello = 0x81, identAnswer, resetRequired, uploadAck, download, markAnswer, queryError, unbound, pong, error
}

// Shared field encodings of client and server messages.
extension BinaryWriter {
    mutating func session(_ s: SessionID) { varint(s.rawValue) }
    mutating func epoch(_ e: SyncEpoch) { fixed64(e.rawValue) }
    mutating func bool(_ b: Bool) { byte(b ? 1 : 0) }
    mutating func fileIdent(_ f: FileIdent) { int(f.ident); int(f.salt) }
    mutating func changeset(_ c: Changeset) { blob(c.encoded()) }
}

extension BinaryReader {
    mutating func session() throws(DecodingFailure) -> SessionID { SessionID(try varint()) }
    mutating func epoch() throws(DecodingFailure) -> SyncEpoch { SyncEpoch(rawValue: try fixed64()) }

    mutating func bool() throws(DecodingFailure) -> Bool {
        let at = offset
        switch try byte() {
        case 0: return false
        case 1: return true
        case let other: throw DecodingFailure("boolean \(other) at byte \(at)")
        }
    }

    mutating func fileIdent() throws(DecodingFailure) -> FileIdent {
        FileIdent(ident: try int(), salt: try int())
    }

    mutating func uint32() throws(DecodingFailure) -> UInt32 {
        let at = offset
        let raw = try varint()
        guard raw <= UInt64(UInt32.max) else { throw DecodingFailure("value \(raw) at byte \(at) exceeds 32 bits") }
        return UInt32(raw)
    }

    mutating func changeset() throws(DecodingFailure) -> Changeset {
        try changesetAndEncoding().changeset
    }

    /// A changeset and the bytes it was decoded from.
    mutating func changesetAndEncoding() throws(DecodingFailure) -> (changeset: Changeset, encoded: Data) {
        let at = offset
        let bytes = Data(try blob())
        do {
            return (try Changeset(decoding: bytes, elementBudget: &elementBudget), bytes)
        } catch {
            throw DecodingFailure("changeset at byte \(at): \(error.message)")
        }
    }

    mutating func enumeration<E: RawRepresentable>(_: E.Type, _ what: String) throws(DecodingFailure) -> E
    where E.RawValue == UInt8 {
        let at = offset
        let raw = try byte()
        guard let value = E(rawValue: raw) else { throw DecodingFailure("unknown \(what) \(raw) at byte \(at)") }
        return value
    }

    /// Ends a message: anything left over is an error.
    func finish() throws(DecodingFailure) {
        guard isAtEnd else { throw DecodingFailure("\(bytes.count - offset) trailing bytes at byte \(offset)") }
    }
}

/// Runs a message decoder and turns its ``DecodingFailure`` into a ``ProtocolError`` naming the
/// message; an empty input or an unknown tag gets its own code.
func decodeMessage<M>(
    _ bytes: some Collection<UInt8>, fromServer: Bool, elementBudget: Int = .max,
    _ body: (MessageTag, inout BinaryReader) throws(DecodingFailure) -> M
) throws(ProtocolError) -> M {
    let side = fromServer ? "server" : "client"
    var r = BinaryReader(bytes)
    r.elementBudget = elementBudget
    let raw: UInt8
    do { raw = try r.byte() } catch { throw ProtocolError(.malformedMessage, "empty \(side) message") }
    guard let tag = MessageTag(rawValue: raw), (raw >= 0x80) == fromServer else {
        throw ProtocolError(.unknownMessage, "unknown \(side) message tag \(raw)")
    }
    do {
        let message = try body(tag, &r)
        try r.finish()
        return message
    } catch {
        throw ProtocolError(.malformedMessage, "\(tag) message: \(error.message)")
    }
}
