import AtollCore
import Testing

@Suite struct ProtocolFramingTests {
    static func message(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    func frame(_ h: FrameHeader, _ payload: [UInt8]) -> [UInt8] {
        var w = BinaryWriter()
        w.varint(h.messageID); w.varint(UInt64(h.index)); w.varint(UInt64(h.count)); w.varint(h.totalBytes)
        return w.bytes + payload
    }

    /// What a message announces is not what it costs: its buffer grows with the chunks that
    /// arrived (issue 21 §2), so a header announcing 64 MiB holds one chunk's worth.
    @Test func aMessageTakesMemoryAsItsChunksArrive() throws {
        var reassembler = MessageReassembler(maxMessageBytes: 64 << 20)
        let chunk = Self.message(16 * 1024)
        #expect(try reassembler.receive(frame(FrameHeader(messageID: 0, index: 0, count: 4096, totalBytes: 64 << 20), chunk)) == nil)
        #expect(reassembler.bufferedBytes >= chunk.count)
        #expect(reassembler.bufferedBytes < 2 * chunk.count, "\(reassembler.bufferedBytes) bytes held for one chunk")
        for index in 1..<8 {
            _ = try reassembler.receive(frame(FrameHeader(messageID: 0, index: UInt32(index), count: 4096, totalBytes: 64 << 20), chunk))
        }
        #expect(reassembler.bufferedBytes < 2 * 8 * chunk.count, "doubling at most")
        // A message of announced size ends with its last chunk, never more held than announced.
        var small = MessageReassembler()
        let whole = Self.message(3 * 1000)
        for index in 0..<3 {
            let done = try small.receive(frame(FrameHeader(messageID: 0, index: UInt32(index), count: 3, totalBytes: 3000),
                                               Array(whole[(index * 1000)..<((index + 1) * 1000)])))
            #expect((done == whole) == (index == 2))
        }
        #expect(small.bufferedBytes == 0)
    }

    /// A message refused from its first chunk holds nothing more: its remaining chunks are still
    /// checked (order, size) and dropped, and the next message arrives as usual.
    @Test func aDiscardedMessageHoldsNothingAndTheNextOneArrives() throws {
        var framer = MessageFramer(maxFrameBytes: 300)
        let refused = framer.frames(for: Self.message(5000))
        let next = Self.message(700, seed: 9)
        let following = framer.frames(for: next)
        var reassembler = MessageReassembler()
        #expect(try reassembler.receive(refused[0]) == nil)
        #expect(reassembler.receivedChunks == 1)
        #expect(reassembler.partialMessage == Array(Self.message(5000).prefix(framer.payloadPerFrame)))
        reassembler.discardRest()
        #expect(reassembler.bufferedBytes == 0 && reassembler.partialMessage.isEmpty && reassembler.isMidMessage)
        for frame in refused.dropFirst() {
            #expect(try reassembler.receive(frame) == nil)
            #expect(reassembler.bufferedBytes == 0)
        }
        #expect(!reassembler.isMidMessage && reassembler.expectedMessageID == 1)
        var result: [UInt8]?
        for frame in following { result = try reassembler.receive(frame) ?? result }
        #expect(result == next)

        // Dropped chunks are still checked.
        var strict = MessageReassembler()
        _ = try strict.receive(refused[0])
        strict.discardRest()
        #expect(throws: ProtocolError.self) { try strict.receive(refused[2]) }
    }

    @Test func fiveMegabyteMessageTravelsIn16KiBFrames() throws {
        let original = Self.message(5 * 1024 * 1024)
        var framer = MessageFramer(maxFrameBytes: 16 * 1024)
        let frames = framer.frames(for: original)
        #expect(frames.count == (original.count + framer.payloadPerFrame - 1) / framer.payloadPerFrame)
        #expect(frames.allSatisfy { $0.count <= 16 * 1024 })
        var reassembler = MessageReassembler(maxMessageBytes: 8 << 20)
        var result: [UInt8]?
        for (i, f) in frames.enumerated() {
            let done = try reassembler.receive(f)
            #expect((done != nil) == (i == frames.count - 1))
            result = done ?? result
        }
        #expect(result == original)
        #expect(reassembler.expectedMessageID == 1 && !reassembler.isMidMessage)
    }

    @Test func messagesFollowEachOtherAndSmallOnesTakeOneFrame() throws {
        var framer = MessageFramer(maxFrameBytes: 100)
        var reassembler = MessageReassembler()
        for size in [0, 1, 69, 70, 71, 500] {
            let original = Self.message(size, seed: UInt8(size % 256))
            var out: [[UInt8]] = []
            for f in framer.frames(for: original) { if let m = try reassembler.receive(f) { out.append(m) } }
            #expect(out == [original], "size \(size)")
        }
        #expect(framer.frames(for: []).count == 1)
    }

    @Test func aRealMessageSurvivesFraming() throws {
        let download = ServerMessage.download(Download(
            session: 1, epoch: 2, changesets: (1...200).map { ProtocolFixtures.serverChangeset($0) },
            progress: DownloadProgress(serverVersion: 200, latestServerVersion: 200, downloadableBytes: 0)))
        var framer = MessageFramer(maxFrameBytes: 1024)
        var reassembler = MessageReassembler()
        var bytes: [UInt8]?
        for f in framer.frames(for: download.encoded()) { bytes = try reassembler.receive(f) ?? bytes }
        #expect(try ServerMessage(decoding: try #require(bytes)) == download)
    }

    func frames(_ size: Int = 1000) -> [[UInt8]] {
        var framer = MessageFramer(maxFrameBytes: 300)
        return framer.frames(for: Self.message(size))
    }

    func expectBadFrame(_ feed: [[UInt8]], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var reassembler = MessageReassembler(maxMessageBytes: 4096)
        do {
            for f in feed { _ = try reassembler.receive(f) }
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .badFrame, sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test func duplicateChunkIsRefused() {
        let f = frames()
        expectBadFrame([f[0], f[1], f[1]], "chunk 1 of 4 of message 0: duplicate")
    }

    @Test func outOfOrderChunkIsRefused() {
        let f = frames()
        expectBadFrame([f[0], f[2]], "out of order (expected chunk 1)")
    }

    @Test func chunkWithoutItsStartIsRefused() {
        expectBadFrame([frames()[1]], "arrived without chunk 0")
    }

    @Test func duplicateWholeMessageIsRefused() {
        let f = frames(10)
        expectBadFrame([f[0], f[0]], "chunk 0 of 1 of message 0 is a duplicate")
    }

    @Test func lostMessageIsNoticed() {
        var framer = MessageFramer(maxFrameBytes: 300)
        _ = framer.frames(for: [1])
        expectBadFrame(framer.frames(for: [2]), "lost message 0")
    }

    @Test func anotherMessageInTheMiddleIsRefused() {
        let f = frames()
        expectBadFrame([f[0], frame(FrameHeader(messageID: 1, index: 1, count: 4, totalBytes: 1000), [1])], "while message 0 is at chunk 1 of 4")
    }

    @Test func inconsistentHeadersAreRefused() {
        let f = frames()
        let payload = Array(f[1].dropFirst(4))
        expectBadFrame([f[0], frame(FrameHeader(messageID: 0, index: 1, count: 5, totalBytes: 1000), payload)], "count or size differs")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 3, count: 2, totalBytes: 10), [1])], "index out of range")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 0, totalBytes: 10), [1])], "index out of range")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 20, totalBytes: 10), [1])], "20 chunks cannot carry 10 bytes")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 1, totalBytes: 3), [1, 2, 3, 4])], "overruns the announced 3 bytes")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 1, totalBytes: 3), [1, 2])], "ended with 2 of 3 bytes")
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 2, totalBytes: 3), [])], "is empty")
    }

    @Test func oversizedMessageIsRefusedBeforeBuffering() {
        expectBadFrame([frame(FrameHeader(messageID: 0, index: 0, count: 1000, totalBytes: 1 << 40), [1])], "exceed the limit of 4096")
    }

    @Test func truncatedHeaderIsRefused() {
        expectBadFrame([[]], "frame header: unexpected end of data at byte 0")
        expectBadFrame([[0x80]], "frame header")
        expectBadFrame([[0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]], "exceeds 32 bits")
    }
}
