/// HMAC-SHA224 (RFC 2104 over FIPS 180-4's SHA-224), which realm-core uses to authenticate encrypted pages.
///
/// swift-crypto offers HMAC over SHA-256/384/512 but has no SHA-224, so this is a small implementation of
/// the SHA-256 compression function with SHA-224's initial values and a 28-byte digest. The key's padded
/// inner and outer blocks are absorbed once, at initialization.
struct HMACSHA224: Sendable {
    static let digestSize = 28
    static let blockSize = 64

    private let innerState: State
    private let outerState: State

    /// `key` may be at most 64 bytes (realm-core's HMAC key is 32).
    init(key: [UInt8]) {
        precondition(key.count <= Self.blockSize)
        var inner = [UInt8](repeating: 0x36, count: Self.blockSize)
        var outer = [UInt8](repeating: 0x5C, count: Self.blockSize)
        for (index, byte) in key.enumerated() {
            inner[index] ^= byte
            outer[index] ^= byte
        }
        var innerState = State.sha224Initial
        var outerState = State.sha224Initial
        inner.withUnsafeBytes { innerState.compress($0.baseAddress!) }
        outer.withUnsafeBytes { outerState.compress($0.baseAddress!) }
        self.innerState = innerState
        self.outerState = outerState
    }

    /// The 28-byte authentication code of `message`.
    func authenticationCode(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        let innerDigest = Self.finish(innerState, absorbedBytes: Self.blockSize, message)
        return innerDigest.withUnsafeBytes { Self.finish(outerState, absorbedBytes: Self.blockSize, $0) }
    }

    /// Plain SHA-224 of `message` (for known-answer tests).
    static func hash(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        finish(.sha224Initial, absorbedBytes: 0, message)
    }

    /// Whether two codes are equal, in time independent of where they differ.
    static func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    /// Absorbs `message` after `absorbedBytes` already absorbed into `state`, pads, and returns the digest.
    private static func finish(_ state: State, absorbedBytes: Int, _ message: UnsafeRawBufferPointer) -> [UInt8] {
        var state = state
        let fullBlocks = message.count / blockSize
        if let base = message.baseAddress, fullBlocks > 0 { state.compress(base, blocks: fullBlocks) }
        // Padding: 0x80, zeros, then the total length in bits as a big-endian 64-bit integer.
        let tail = message.count - fullBlocks * blockSize
        var last = [UInt8](repeating: 0, count: tail < 56 ? blockSize : 2 * blockSize)
        if tail > 0 { last.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: message[(fullBlocks * blockSize)...])) } }
        last[tail] = 0x80
        let bitLength = UInt64(absorbedBytes + message.count) * 8
        for index in 0..<8 { last[last.count - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index))) }
        last.withUnsafeBytes { state.compress($0.baseAddress!, blocks: $0.count / blockSize) }
        var digest = [UInt8](repeating: 0, count: digestSize)
        for word in 0..<7 {
            let value = state.word(word)
            for byte in 0..<4 { digest[word * 4 + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(byte))) }
        }
        return digest
    }

    /// The eight working words of SHA-256.
    private struct State: Sendable {
        var h0, h1, h2, h3, h4, h5, h6, h7: UInt32

        static let sha224Initial = State(h0: 0xC105_9ED8, h1: 0x367C_D507, h2: 0x3070_DD17, h3: 0xF70E_5939,
                                         h4: 0xFFC0_0B31, h5: 0x6858_1511, h6: 0x64F9_8FA7, h7: 0xBEFA_4FA4)

        func word(_ index: Int) -> UInt32 {
            switch index {
            case 0: h0
            case 1: h1
            case 2: h2
            case 3: h3
            case 4: h4
            case 5: h5
            case 6: h6
            default: h7
            }
        }

        /// Processes one 64-byte block at `block`.
        mutating func compress(_ block: UnsafeRawPointer) {
            compress(block, blocks: 1)
        }

        /// Processes `blocks` consecutive 64-byte blocks starting at `start`.
        mutating func compress(_ start: UnsafeRawPointer, blocks: Int) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                Self.roundConstants.withUnsafeBufferPointer { k in
                    for blockIndex in 0..<blocks {
                        compress(start + blockIndex * 64, w.baseAddress!, k.baseAddress!)
                    }
                }
            }
        }

        @inline(__always)
        private mutating func compress(_ block: UnsafeRawPointer, _ w: UnsafeMutablePointer<UInt32>, _ k: UnsafePointer<UInt32>) {
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
            }
            var t = 16
            while t < 64 {
                let x = w[t &- 15], y = w[t &- 2]
                let s0 = ((x &>> 7) | (x &<< 25)) ^ ((x &>> 18) | (x &<< 14)) ^ (x &>> 3)
                let s1 = ((y &>> 17) | (y &<< 15)) ^ ((y &>> 19) | (y &<< 13)) ^ (y &>> 10)
                w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
                t &+= 1
            }
            var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
            t = 0
            while t < 64 {
                let s1 = ((e &>> 6) | (e &<< 26)) ^ ((e &>> 11) | (e &<< 21)) ^ ((e &>> 25) | (e &<< 7))
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ k[t] &+ w[t]
                let s0 = ((a &>> 2) | (a &<< 30)) ^ ((a &>> 13) | (a &<< 19)) ^ ((a &>> 22) | (a &<< 10))
                let majority = (a & b) ^ (a & c) ^ (b & c)
                h = g; g = f; f = e; e = d &+ t1
                d = c; c = b; b = a; a = t1 &+ s0 &+ majority
                t &+= 1
            }
            h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
            h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
        }

        static let roundConstants: [UInt32] = [
            0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
            0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
            0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
            0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
            0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
            0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
            0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
            0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
        ]
    }
}
