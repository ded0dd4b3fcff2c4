/// The header in front of every WebSocket frame: which message the chunk belongs to and where.
///
/// Four LEB128 varints: message id, chunk index, chunk count, total message bytes. Message ids
/// count from 0 on each connection and direction, one per message.
package struct FrameHeader: Hashable, Sendable {
    package var messageID: UInt64
    package var index: UInt32
    package var count: UInt32
    package var totalBytes: UInt64

    package init(messageID: UInt64, index: UInt32, count: UInt32, totalBytes: UInt64) {
        self.messageID = messageID
        self.index = index
        self.count = count
        self.totalBytes = totalBytes
    }

    /// The most bytes a header takes (10 + 5 + 5 + 10).
    package static let maxEncodedSize = 30

    func encode(into w: inout BinaryWriter) {
        w.varint(messageID); w.varint(UInt64(index)); w.varint(UInt64(count)); w.varint(totalBytes)
    }

    static func decode(from r: inout BinaryReader) throws(DecodingFailure) -> FrameHeader {
        FrameHeader(messageID: try r.varint(), index: try r.uint32(), count: try r.uint32(), totalBytes: try r.varint())
    }
}

/// Splits encoded messages into WebSocket frames of at most ``maxFrameBytes`` bytes each, header
/// included: a message of any size is sent, never rejected.
///
/// ```swift
/// var framer = MessageFramer(maxFrameBytes: 16 * 1024)
/// for frame in framer.frames(for: message.encoded()) { try await socket.send(frame) }
/// ```
package struct MessageFramer: Sendable {
    package let maxFrameBytes: Int
    /// The id the next message gets.
    package private(set) var nextMessageID: UInt64 = 0

    /// - Precondition: `maxFrameBytes` leaves room for a header and at least 32 payload bytes.
    package init(maxFrameBytes: Int = 16 * 1024) {
        precondition(maxFrameBytes >= FrameHeader.maxEncodedSize + 32, "frames of \(maxFrameBytes) bytes are too small")
        self.maxFrameBytes = maxFrameBytes
    }

    /// The payload bytes one frame carries.
    package var payloadPerFrame: Int { maxFrameBytes - FrameHeader.maxEncodedSize }

    /// The frames of one message, in the order they must be sent (an empty message is one frame).
    ///
    /// - Complexity: O(n) in the message size.
    package mutating func frames(for message: [UInt8]) -> [[UInt8]] {
        let per = payloadPerFrame
        let count = max(1, (message.count + per - 1) / per)
        let id = nextMessageID
        nextMessageID &+= 1
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            var w = BinaryWriter()
            FrameHeader(messageID: id, index: UInt32(index), count: UInt32(count), totalBytes: UInt64(message.count)).encode(into: &w)
            let start = index * per
            var frame = w.bytes
            frame.reserveCapacity(frame.count + min(per, message.count - start))
            frame.append(contentsOf: message[start..<min(message.count, start + per)])
            frames.append(frame)
        }
        return frames
    }
}

/// Rebuilds messages from the frames of a ``MessageFramer``, in arrival order.
///
/// Memory is bounded by ``maxMessageBytes``: a header announcing more is refused before anything
/// is buffered, and a message takes memory as its chunks arrive, not as its header announces. Frames must arrive in order, one message after another (a WebSocket keeps order);
/// a duplicate, missing, reordered or inconsistent chunk throws ``ProtocolError`` with
/// ``ServerErrorCode/badFrame``, after which the connection must be closed.
///
/// ```swift
/// var reassembler = MessageReassembler(maxMessageBytes: 256 << 20)
/// if let bytes = try reassembler.receive(frame) { let message = try ServerMessage(decoding: bytes) }
/// ```
package struct MessageReassembler: Sendable {
    /// Raised once a connection is authenticated (the server starts small).
    package var maxMessageBytes: Int
    /// The id the next message must have.
    package private(set) var expectedMessageID: UInt64 = 0
    private var header: FrameHeader?
    private var buffer: [UInt8] = []
    private var received: UInt32 = 0
    /// Payload bytes of the current message received so far (kept in `buffer` unless discarding).
    private var receivedBytes = 0
    /// Whether the rest of the current message is checked and dropped (``discardRest()``).
    private var isDiscarding = false

    package init(maxMessageBytes: Int = 256 << 20) { self.maxMessageBytes = maxMessageBytes }

    /// Whether a message is partly received.
    package var isMidMessage: Bool { header != nil }

    /// Bytes of the partly received message held so far (0 between messages).
    package var bufferedBytes: Int { header == nil ? 0 : buffer.capacity }

    /// The start of the partly received message: what its chunks so far carried (empty between
    /// messages and once its rest is discarded). A reader can refuse a message from its first
    /// chunk, before the rest arrives.
    package var partialMessage: [UInt8] { buffer }

    /// How many chunks of the partly received message arrived (0 between messages).
    package var receivedChunks: Int { header == nil ? 0 : Int(received) }

    /// Bytes of the partly received message still to come, as its header announced (0 between
    /// messages).
    package var remainingBytes: Int { header.map { Int($0.totalBytes) - receivedBytes } ?? 0 }

    /// Frees what the partly received message holds and drops its remaining chunks as they
    /// arrive (still checked for order and size); ``receive(_:)`` then returns nil for its last
    /// one. Does nothing between messages.
    package mutating func discardRest() {
        guard header != nil else { return }
        isDiscarding = true
        buffer = []
    }

    /// Takes one frame; returns the message it completes, if any.
    package mutating func receive(_ frame: some Collection<UInt8>) throws(ProtocolError) -> [UInt8]? {
        var r = BinaryReader(frame)
        let h: FrameHeader
        do { h = try FrameHeader.decode(from: &r) } catch {
            throw ProtocolError(.badFrame, "frame header: \(error.message)")
        }
        let payload = Array(frame.dropFirst(r.offset))
        let what = "chunk \(h.index) of \(h.count) of message \(h.messageID)"
        guard h.count >= 1, h.index < h.count else { throw ProtocolError(.badFrame, "\(what): index out of range") }
        guard h.totalBytes <= UInt64(maxMessageBytes) else {
            throw ProtocolError(.badFrame, "\(what): \(h.totalBytes) bytes exceed the limit of \(maxMessageBytes)")
        }
        guard h.totalBytes == 0 ? h.count == 1 : UInt64(h.count) <= h.totalBytes else {
            throw ProtocolError(.badFrame, "\(what): \(h.count) chunks cannot carry \(h.totalBytes) bytes")
        }
        if let first = header {
            guard h.messageID == first.messageID else {
                throw ProtocolError.inTransit("\(what) while message \(first.messageID) is at chunk \(received) of \(first.count)")
            }
            guard h.index == received else {
                let problem = h.index < received ? "duplicate" : "out of order (expected chunk \(received))"
                throw ProtocolError.inTransit("\(what): \(problem)")
            }
            guard h.count == first.count, h.totalBytes == first.totalBytes else {
                throw ProtocolError(.badFrame, "\(what): count or size differs from chunk 0 (\(first.count) chunks, \(first.totalBytes) bytes)")
            }
        } else {
            guard h.messageID == expectedMessageID else {
                let problem = h.messageID < expectedMessageID ? "a duplicate" : "out of order (lost message \(expectedMessageID))"
                throw ProtocolError.inTransit("\(what) is \(problem)")
            }
            guard h.index == 0 else { throw ProtocolError.inTransit("\(what) arrived without chunk 0") }
            header = h
            // Nothing is reserved for what is only announced: the buffer grows as chunks arrive.
            buffer = []
            received = 0
            receivedBytes = 0
            isDiscarding = false
        }
        guard !payload.isEmpty || h.totalBytes == 0 else { throw ProtocolError(.badFrame, "\(what) is empty") }
        guard UInt64(receivedBytes + payload.count) <= h.totalBytes else {
            throw ProtocolError(.badFrame, "\(what) overruns the announced \(h.totalBytes) bytes")
        }
        if !isDiscarding {
            if buffer.capacity < buffer.count + payload.count {
                // Doubling, but never past the announced size.
                buffer.reserveCapacity(min(Int(h.totalBytes), max(buffer.count * 2, buffer.count + payload.count)))
            }
            buffer.append(contentsOf: payload)
        }
        receivedBytes += payload.count
        received += 1
        guard received == h.count else { return nil }
        guard UInt64(receivedBytes) == h.totalBytes else {
            throw ProtocolError(.badFrame, "message \(h.messageID) ended with \(receivedBytes) of \(h.totalBytes) bytes")
        }
        header = nil
        expectedMessageID &+= 1
        defer { buffer = [] }
        guard !isDiscarding else { return nil }
        return buffer
    }
}
