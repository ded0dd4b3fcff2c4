import NIOCore

/// Cuts a WebSocket byte stream (RFC 6455, §5.2) into whole frames, so a proxy can drop,
/// duplicate or swap frames without breaking the framing. It reads only the header (FIN, opcode,
/// mask bit, 7/16/64-bit payload length, masking key) and never unmasks or inspects payloads.
///
/// Memory is bounded: a frame of at most `maxFrameBytes` (header included) is handed out whole;
/// a longer one is handed out as it streams (``Piece/streamStart(_:)`` then ``Piece/streamPart(_:isLast:)``),
/// never buffered, so at most one frame of `maxFrameBytes` is held.
///
/// ```swift
/// var parser = WebSocketFrameParser(maxFrameBytes: 1 << 20)
/// for piece in parser.append(bytes) { ... }
/// ```
package struct WebSocketFrameParser: Sendable {
    package enum Piece: Sendable, Equatable {
        /// A whole frame: its header and payload.
        case frame(ByteBuffer)
        /// The header (and maybe the start of the payload) of a frame longer than `maxFrameBytes`.
        case streamStart(ByteBuffer)
        /// More of a streamed frame; `isLast` when it completes the frame.
        case streamPart(ByteBuffer, isLast: Bool)
    }

    /// What a frame header says.
    package struct Header: Sendable, Equatable {
        package var fin: Bool
        package var opcode: UInt8
        package var masked: Bool
        package var headerLength: Int
        package var payloadLength: UInt64
        package var frameLength: UInt64 { UInt64(headerLength) + payloadLength }
        /// Close, ping or pong.
        package var isControl: Bool { opcode & 0x8 != 0 }
    }

    package let maxFrameBytes: Int
    private var buffer = ByteBuffer()
    /// Bytes of a streamed (oversized) frame still to pass.
    private var streamRemaining: UInt64 = 0

    package init(maxFrameBytes: Int) {
        precondition(maxFrameBytes >= 14, "a frame header alone takes up to 14 bytes")
        self.maxFrameBytes = maxFrameBytes
    }

    /// Bytes held waiting for the rest of a frame.
    package var bufferedBytes: Int { buffer.readableBytes }

    /// Parses a header at the start of `bytes`, or `nil` when more bytes are needed.
    package static func header(of bytes: ByteBufferView) -> Header? {
        guard bytes.count >= 2 else { return nil }
        let start = bytes.startIndex
        let b0 = bytes[start], b1 = bytes[start + 1]
        let masked = b1 & 0x80 != 0
        let length7 = b1 & 0x7F
        let extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
        let headerLength = 2 + extended + (masked ? 4 : 0)
        guard bytes.count >= headerLength else { return nil }
        var payload = UInt64(length7)
        if extended > 0 {
            payload = 0
            for i in 0..<extended { payload = payload << 8 | UInt64(bytes[start + 2 + i]) }
        }
        return Header(fin: b0 & 0x80 != 0, opcode: b0 & 0x0F, masked: masked, headerLength: headerLength, payloadLength: payload)
    }

    /// Takes the next bytes of the stream; returns the pieces they complete, in order.
    ///
    /// - Complexity: O(n) in the bytes given, plus one copy of each buffered frame.
    package mutating func append(_ bytes: ByteBuffer) -> [Piece] {
        var input = bytes
        var pieces: [Piece] = []
        while true {
            if streamRemaining > 0 {
                guard input.readableBytes > 0 else { break }
                let take = Int(min(UInt64(input.readableBytes), streamRemaining))
                streamRemaining -= UInt64(take)
                pieces.append(.streamPart(input.readSlice(length: take)!, isLast: streamRemaining == 0))
                continue
            }
            if buffer.readableBytes == 0 && input.readableBytes == 0 { break }
            // Parse straight from the input when nothing is buffered (the common case), else
            // top the buffer up to a header.
            if buffer.readableBytes == 0, let header = Self.header(of: input.readableBytesView) {
                if header.frameLength <= UInt64(maxFrameBytes) {
                    guard input.readableBytes >= Int(header.frameLength) else { break }
                    pieces.append(.frame(input.readSlice(length: Int(header.frameLength))!))
                } else {
                    streamRemaining = header.frameLength - UInt64(header.headerLength)
                    pieces.append(.streamStart(input.readSlice(length: header.headerLength)!))
                }
                continue
            }
            if buffer.readableBytes == 0 {
                break  // an incomplete header: buffer the rest below
            }
            // Something is buffered: complete its header, then its frame.
            guard let header = Self.header(of: buffer.readableBytesView) else {
                guard input.readableBytes > 0 else { break }
                var one = input.readSlice(length: 1)!
                buffer.writeBuffer(&one)
                continue
            }
            if header.frameLength > UInt64(maxFrameBytes) {
                let head = buffer.readSlice(length: header.headerLength)!
                streamRemaining = header.frameLength - UInt64(header.headerLength)
                pieces.append(.streamStart(head))
                // Whatever followed the header in the buffer is payload of the streamed frame.
                if buffer.readableBytes > 0 {
                    let take = Int(min(UInt64(buffer.readableBytes), streamRemaining))
                    streamRemaining -= UInt64(take)
                    pieces.append(.streamPart(buffer.readSlice(length: take)!, isLast: streamRemaining == 0))
                }
                buffer.discardReadBytes()
                continue
            }
            let missing = Int(header.frameLength) - buffer.readableBytes
            guard input.readableBytes >= missing else { break }
            var rest = input.readSlice(length: missing)!
            buffer.writeBuffer(&rest)
            pieces.append(.frame(buffer))
            buffer = ByteBuffer()
        }
        if input.readableBytes > 0 { buffer.writeBuffer(&input) }
        return pieces
    }
}
