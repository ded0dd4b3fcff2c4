import AtollRealmFile
import Foundation
import Testing

/// Damaged copies of every fixture: each must either read completely or throw `RealmFileError`,
/// quickly, without crashing.
///
/// The default run is a few thousand cases; set `REALMFILE_FUZZ_CASES` to the number of cases per
/// fixture for a longer run, and `REALMFILE_FUZZ_SEED` to vary the fixed seed.
@Suite struct FuzzTests {
    static let casesPerFixture = Int(ProcessInfo.processInfo.environment["REALMFILE_FUZZ_CASES"] ?? "") ?? 400
    static let seed = UInt64(ProcessInfo.processInfo.environment["REALMFILE_FUZZ_SEED"] ?? "") ?? 0x5EED_F11E
    /// Generous bound per case in a debug build; a real hang would blow through it by orders of magnitude.
    static let timeBound = Duration.seconds(5)

    enum Mutation: CustomStringConvertible {
        case truncate(Int)
        case flipBits([Int])
        case swapWords(Int, Int)
        /// Overwrites one of bytes 4–7 (flags, element count) of a node header.
        case damageHeader(at: Int, value: UInt8)
        /// Points a ref-looking word at some node header, which may be an ancestor (a cycle) or a node of
        /// another kind.
        case redirectRef(word: Int, to: Int)

        var description: String {
            switch self {
            case let .truncate(length): "truncate to \(length)"
            case let .flipBits(bits): "flip bits \(bits)"
            case let .swapWords(a, b): "swap words \(a) and \(b)"
            case let .damageHeader(offset, value): "set byte \(offset) to \(value)"
            case let .redirectRef(word, target): "point word \(word) at \(target)"
            }
        }

        func apply(to bytes: [UInt8]) -> [UInt8] {
            var copy = bytes
            switch self {
            case let .truncate(length): copy.removeLast(copy.count - length)
            case let .flipBits(bits): for bit in bits { copy[bit / 8] ^= 1 << UInt8(bit % 8) }
            case let .swapWords(a, b): for index in 0..<8 { copy.swapAt(a * 8 + index, b * 8 + index) }
            case let .damageHeader(offset, value): copy[offset] = value
            case let .redirectRef(word, target):
                for index in 0..<8 { copy[word * 8 + index] = UInt8(truncatingIfNeeded: UInt64(target) >> (8 * UInt64(index))) }
            }
            return copy
        }
    }

    /// A small deterministic generator (SplitMix64), so failures reproduce from the seed.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutations(count: Int, of bytes: [UInt8], seed: UInt64) -> [Mutation] {
        var random = SplitMix64(state: seed)
        let size = bytes.count
        let words = size / 8
        // Realm marks node headers with "AAAA" in the checksum bytes; aim damage at them.
        let headers = stride(from: 24, to: size - 8, by: 8).filter { bytes[$0..<$0 + 4].allSatisfy { $0 == UInt8(ascii: "A") } }
        let refWords = (3..<words).filter { word in
            let value = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[word * 8 + $1]) << (8 * UInt64($1)) }
            return value != 0 && value % 8 == 0 && value < UInt64(size)
        }
        return (0..<count).map { index in
            switch index % 5 {
            case 0: .truncate(Int.random(in: 0..<size, using: &random))
            case 1: .flipBits((0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 0..<size * 8, using: &random) })
            case 2: .swapWords(Int.random(in: 0..<words, using: &random), Int.random(in: 0..<words, using: &random))
            case 3:
                .damageHeader(at: (headers.randomElement(using: &random) ?? 24) + Int.random(in: 4...7, using: &random),
                              value: UInt8.random(in: 0...255, using: &random))
            default:
                .redirectRef(word: refWords.randomElement(using: &random) ?? 3, to: headers.randomElement(using: &random) ?? 24)
            }
        }
    }

    /// Reads everything a client would: schema, counts, every object, and a key lookup.
    static func readEverything(_ data: Data, encryptionKey: Data? = nil) throws(RealmFileError) {
        let file = try RealmFile(data: data, encryptionKey: encryptionKey)
        _ = file.schemaVersion
        for table in file.tables {
            _ = try table.objectCount()
            var cursor = table.objects()
            var last: RealmObject?
            while let object = try cursor.next() { last = object }
            if let last { _ = try table.object(key: last.key) }
        }
    }

    @Test(arguments: Fixtures.all)
    func damagedFilesReadOrThrow(name: String) throws {
        let original = [UInt8](try Fixtures.data(name))
        // The 10,000-object file is 40 times larger than the others; give it fewer cases.
        let count = original.count > 100_000 ? max(Self.casesPerFixture / 4, 1) : Self.casesPerFixture
        try Self.fuzz(original, name: name, count: count)
    }

    /// The synthetic file holds the leaf layouts the fixtures lack (Float, Decimal128, UUID, enum strings...).
    @Test func damagedSyntheticFileReadsOrThrows() throws {
        try Self.fuzz([UInt8](SyntheticLeafTests.allTypesFile()), name: "synthetic", count: Self.casesPerFixture)
    }

    /// Synthetic files of collections nested in Mixed values: a dictionary of a list, and 100 nested lists.
    @Test func damagedNestedMixedFilesReadOrThrow() throws {
        try Self.fuzz([UInt8](Format24SyntheticTests.nestedDictionaryFile()), name: "nested dictionary", count: max(Self.casesPerFixture / 2, 1))
        try Self.fuzz([UInt8](Format24SyntheticTests.nestedLists(levels: 100, chain: 1)), name: "nested lists", count: max(Self.casesPerFixture / 2, 1))
    }

    /// Encrypted copies (realm-core's page encryption), damaged in their ciphertext and IV tables: a smaller
    /// run, since every case authenticates and decrypts the whole file.
    @Test(arguments: ["sync-metadata-v6.realm", "test_upgrade_database_4_22.realm"])
    func damagedEncryptedFileReadsOrThrows(name: String) throws {
        let plain = TestEncryptor.logicalImage([UInt8](try Fixtures.data(name)))
        let encrypted = TestEncryptor.encrypt(plain, counter: { UInt32($0 % 3 + 1) })
        try Self.fuzz(encrypted, name: "encrypted " + name, count: max(Self.casesPerFixture / 4, 1), encryptionKey: Data(TestEncryptor.key))
        // Aimed at the IV tables: entries cleared, slots swapped, counters changed.
        var random = SplitMix64(state: Self.seed ^ name.hashValueStable)
        let pages = plain.count / 4096
        for _ in 0..<max(Self.casesPerFixture / 8, 1) {
            var damaged = encrypted
            let entry = TestEncryptor.entryOffset(Int.random(in: 0..<pages, using: &random))
            switch Int.random(in: 0..<4, using: &random) {
            case 0: damaged.replaceSubrange(entry..<entry + 64, with: [UInt8](repeating: 0, count: 64))
            case 1: for index in 0..<32 { damaged.swapAt(entry + index, entry + 32 + index) }
            case 2: damaged[entry + Int.random(in: 0..<4, using: &random)] = UInt8.random(in: 0...255, using: &random)
            default: damaged[entry + 32 + Int.random(in: 0..<32, using: &random)] ^= 0xFF
            }
            do { try Self.readEverything(Data(damaged), encryptionKey: Data(TestEncryptor.key)) } catch {}
        }
    }

    /// The file realm-core encrypted itself, with its own key: damaged ciphertext and IV tables must fail
    /// authentication or read cleanly. A small run, since each case decrypts the whole file.
    @Test func damagedRealmEncryptedFileReadsOrThrows() throws {
        let original = [UInt8](try Fixtures.data(Fixtures.encryptedAllTypes))
        try Self.fuzz(original, name: Fixtures.encryptedAllTypes, count: max(Self.casesPerFixture / 8, 1), encryptionKey: Fixtures.allTypesKey)
    }

    static func fuzz(_ original: [UInt8], name: String, count: Int, encryptionKey: Data? = nil) throws {
        let seed = Self.seed ^ UInt64(truncatingIfNeeded: name.hashValueStable)
        var outcomes = (read: 0, threw: 0)
        let clock = ContinuousClock()
        for mutation in Self.mutations(count: count, of: original, seed: seed) {
            let damaged = Data(mutation.apply(to: original))
            let started = clock.now
            do {
                try Self.readEverything(damaged, encryptionKey: encryptionKey)
                outcomes.read += 1
            } catch {
                outcomes.threw += 1
            }
            let elapsed = clock.now - started
            #expect(elapsed < Self.timeBound, "\(name): \(mutation) took \(elapsed)")
        }
        #expect(outcomes.read + outcomes.threw == count)
        // Truncations alone guarantee some failures; bit flips in padding guarantee some successes.
        #expect(outcomes.threw > 0)
        #expect(outcomes.read > 0)
    }
}

extension String {
    /// A hash that is the same in every process (Swift's `hashValue` is randomly seeded).
    var hashValueStable: UInt64 {
        utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
