import AtollRealmFile
import Foundation
import Testing

/// Format-24 layouts the Realm-written fixtures hold only in part: narrow decimal leaves with special values,
/// and collections nested in Mixed values at Realm's nesting limit, plus damaged nestings that must fail cleanly.
@Suite struct Format24SyntheticTests {
    typealias Builder = SyntheticFileBuilder
    static let nullable: Int64 = 16

    // MARK: Decimal128 leaves of 4 and 8 bytes

    static func decimals(_ words: [UInt64], width: Int) throws -> [RealmValue] {
        var b = Builder()
        let leaf = b.wide(words.map { [$0] }, width: width)
        let column = Builder.Column(name: "d", type: 11, attributes: Self.nullable, target: 0, leaf: leaf)
        let table = b.table(key: 0, columns: [column], count: words.count)
        let data = b.finish(tableNames: ["t"], tables: [table], format: 24)
        return try RealmFile(data: data).table(named: "t").allObjects().map { $0["d"] ?? .null }
    }

    static func decimal(_ high: UInt64, _ low: UInt64) -> RealmValue { .decimal128(RealmDecimal128(low: low, high: high)) }

    /// Expected values follow IEEE 754 widening (what realm-core's bid32_to_bid128 / bid64_to_bid128 return).
    @Test func narrowDecimalsWidenLikeRealm() throws {
        let bid32: [(UInt32, RealmValue)] = [
            (0x7c00_00aa, .null),                                                  // Realm's 32-bit null
            (0x3200_000f, Self.decimal(0x303e_0000_0000_0000, 15)),                // 1.5
            (0xb280_0000, Self.decimal(0xb040_0000_0000_0000, 0)),                 // -0
            (0x6078_967f, Self.decimal(0x2f7c_0000_0000_0000, 9_999_999)),          // large form, 9999999E-98
            (0x6cbf_ffff, Self.decimal(0x3040_0000_0000_0000, 0)),                 // non-canonical: zero
            (0x7c00_0005, Self.decimal(0x7c00_0000_1027_e72f, 0x1f12_8130_8800_0000)), // NaN, payload 5 × 10^27
            (0xfe0f_423f, Self.decimal(0xfc00_314d_c309_5f56, 0x98f0_dacd_1800_0000)), // -sNaN 999999: quietened
            (0x7c0f_4240, Self.decimal(0x7c00_0000_0000_0000, 0)),                 // NaN payload ≥ 10^6: dropped
            (0xf800_0123, Self.decimal(0xf800_0000_0000_0000, 0)),                 // -Infinity
        ]
        for ((bits, expected), actual) in zip(bid32, try Self.decimals(bid32.map { UInt64($0.0) }, width: 4)) {
            #expect(actual == expected, "bid32 \(String(bits, radix: 16))")
        }
        let bid64: [(UInt64, RealmValue)] = [
            (0x7c00_0000_0000_00aa, .null),                                        // Realm's 64-bit null
            (0x8c20_0000_0000_0019, Self.decimal(0xade6_0000_0000_0000, 25)),      // -25E-301
            (0x6c83_86f2_6fc0_ffff, Self.decimal(0x3044_0000_0000_0000, 9_999_999_999_999_999)),
            (0x6c77_ffff_ffff_ffff, Self.decimal(0x3040_0000_0000_0000, 0)),       // non-canonical: zero
            (0x7c00_0000_0000_0007, Self.decimal(0x7c00_0000_0000_0000, 0x6124_fee9_93bc_0000)), // payload 7 × 10^18
            (0x7c03_8d7e_a4c6_8000, Self.decimal(0x7c00_0000_0000_0000, 0)),       // payload ≥ 10^15: dropped
            (0x7800_0000_0000_0000, Self.decimal(0x7800_0000_0000_0000, 0)),       // +Infinity
        ]
        for ((bits, expected), actual) in zip(bid64, try Self.decimals(bid64.map(\.0), width: 8)) {
            #expect(actual == expected, "bid64 \(String(bits, radix: 16))")
        }
    }

    /// Values compare as stored: a NaN equals itself (so two reads of a file are equal), 0.0 differs from -0.0.
    @Test func floatingPointValuesCompareByBits() {
        #expect(RealmValue.double(.nan) == .double(.nan))
        #expect(RealmValue.float(.nan) == .float(.nan))
        #expect(RealmValue.double(0) != .double(-0.0))
        #expect(RealmValue.list([.float(-0.0)]) != .list([.float(0)]))
        #expect(Set<RealmValue>([.double(.nan), .double(.nan), .double(0), .double(-0.0)]).count == 3)
        #expect(RealmValue.int(1) != .double(1))
    }

    // MARK: Collections nested in Mixed

    static let listTag: Int64 = 4 << 5 | 20, dictionaryTag: Int64 = 4 << 5 | 22

    /// An ArrayMixed leaf: composite tags, then ints, pairs, strings and collection refs side arrays.
    static func mixedLeaf(_ b: inout Builder, tags: [Int64], strings: [[UInt8]] = [], refs: [Int64] = []) -> Int64 {
        let composite = b.ints(tags)
        let stringLeaf = strings.isEmpty ? 0 : b.smallBlobs(strings.map { $0 + [0] })
        let refLeaf = refs.isEmpty ? 0 : b.refs(refs)
        return b.refs([composite, 0, 0, stringLeaf, refLeaf])
    }

    /// One object whose Mixed column holds the collection tagged `tag` with ref `ref`.
    static func file(_ b: inout Builder, tag: Int64, ref: Int64) -> Data {
        let leaf = mixedLeaf(&b, tags: [tag], refs: [ref])
        let column = Builder.Column(name: "any", type: 6, attributes: Self.nullable, target: 0, leaf: leaf)
        let table = b.table(key: 0, columns: [column], count: 1)
        return b.finish(tableNames: ["t"], tables: [table], format: 24)
    }

    static func read(_ data: Data) throws -> RealmValue {
        try RealmFile(data: data).table(named: "t").allObjects().first?["any"] ?? .null
    }

    /// `levels` lists, each the only element of the one above; the innermost holds the integer 7. Each list's
    /// leaf sits under `chain` single-child inner nodes.
    static func nestedLists(levels: Int, chain: Int = 0) -> Data {
        var b = Builder()
        var ref = mixedLeaf(&b, tags: [7 << 8 | 1])
        for level in 0..<levels {
            for _ in 0..<chain { ref = b.ints([Builder.tagged(1), ref, Builder.tagged(1)], hasRefs: true, inner: true) }
            if level == levels - 1 { break }
            ref = mixedLeaf(&b, tags: [Self.listTag], refs: [ref])
        }
        return file(&b, tag: Self.listTag, ref: ref)
    }

    static func expectedNesting(_ levels: Int) -> RealmValue {
        var value = RealmValue.list([.int(7)])
        for _ in 1..<levels { value = .list([value]) }
        return value
    }

    /// `{"a": [true, null], "e": {}, "z": "x"}` in a Mixed column; "e" was created but never filled (ref 0).
    static func nestedDictionaryFile() -> Data {
        var b = Builder()
        let inner = Self.mixedLeaf(&b, tags: [1 << 8 | 2, 0], refs: [])
        let keys = b.shortStrings(["a", "e", "z"])
        let values = Self.mixedLeaf(&b, tags: [0 << 8 | Self.listTag, 1 << 8 | Self.dictionaryTag, 1 << 8 | 3 << 5 | 3],
                                    strings: [[], Array("x".utf8)], refs: [inner, 0])
        let dictionary = b.refs([keys, values])
        return Self.file(&b, tag: Self.dictionaryTag, ref: dictionary)
    }

    @Test func listsAndDictionariesNest() throws {
        let value = try Self.read(Self.nestedDictionaryFile())
        #expect(value == .dictionary([RealmDictionaryEntry(key: "a", value: .list([.bool(true), .null])),
                                      RealmDictionaryEntry(key: "e", value: .dictionary([])),
                                      RealmDictionaryEntry(key: "z", value: .string("x"))]))
        // A collection created but never filled has ref 0.
        var empty = Builder()
        #expect(try Self.read(Self.file(&empty, tag: Self.listTag, ref: 0)) == .list([]))
    }

    @Test func nestingUpToRealmsLimitReads() throws {
        #expect(try Self.read(Self.nestedLists(levels: 100)) == Self.expectedNesting(100))
        #expect(throws: RealmFileError.self) { try Self.read(Self.nestedLists(levels: 101)) }
    }

    /// The deepest reads a file can cause stay within a 512 KiB stack (a GCD worker thread's size): nesting is
    /// read without recursion, and only each collection's own B+tree (at most 48 levels) is walked recursively.
    @Test func deepNestingFitsASmallStack() throws {
        let cases: [(data: Data, outcome: String)] = [
            (Self.nestedLists(levels: 100), "read"),
            (Self.nestedLists(levels: 100, chain: 48), "read"),    // every list under 48 inner nodes
            (Self.nestedLists(levels: 101, chain: 48), "nest deeper than Realm allows"),
            (Self.nestedLists(levels: 3, chain: 49), "B+tree deeper"),
        ]
        let outcomes = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            for (data, _) in cases {
                let outcome: String
                do { outcome = try Self.read(data) == Self.expectedNesting(100) ? "read" : "misread" } catch { outcome = "\(error)" }
                outcomes.mutate { $0.append(outcome) }
            }
            // Exporting recurses per level; it stays inside the same stack.
            var lines: [String] = []
            do {
                let file = try RealmFile(data: cases[0].data)
                try RealmFileReport.export(file.table(named: "t"), of: file) { lines.append($0) }
            } catch { lines.append("\(error)") }
            outcomes.mutate { $0.append(lines.joined()) }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        var results = outcomes.value
        #expect(results.count == cases.count + 1)
        let exported = results.popLast()
        #expect(exported == "{\"any\":" + String(repeating: "[", count: 100) + "7" + String(repeating: "]", count: 100) + "}")
        for (result, expected) in zip(results, cases.map(\.outcome)) {
            #expect(result.contains(expected), "\(result)")
        }
    }

    @Test func damagedNestingThrows() throws {
        // A nested list that contains itself: its refs array points at the leaf written right after it.
        var b = Builder()
        let leafRef = Int64(b.bytes.count) + 16 + 16 // composite node (8 + 8), refs node (8 + 8), then the leaf
        let compositeNode = b.ints([Self.listTag])
        let refsNode = b.refs([leafRef])
        let leaf = b.refs([compositeNode, 0, 0, 0, refsNode])
        #expect(leaf == leafRef)
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&b, tag: Self.listTag, ref: leaf)) }

        // Two elements sharing one nested list.
        var shared = Builder()
        let list = Self.mixedLeaf(&shared, tags: [1 << 8 | 1])
        let outer = Self.mixedLeaf(&shared, tags: [0 << 8 | Self.listTag, 1 << 8 | Self.listTag], refs: [list, list])
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&shared, tag: Self.listTag, ref: outer)) }

        // A set tag (Realm never nests sets), a collection outside the refs array, a ref index past its array,
        // and a ref slot holding an integer.
        var set = Builder()
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&set, tag: 4 << 5 | 21, ref: 0)) }
        var misplaced = Builder()
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&misplaced, tag: 1 << 5 | 20, ref: 0)) }
        var pastEnd = Builder()
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&pastEnd, tag: 5 << 8 | Self.listTag, ref: 0)) }
        var tagged = Builder()
        #expect(throws: RealmFileError.self) { try Self.read(Self.file(&tagged, tag: Self.listTag, ref: 9)) }
    }
}

/// A value shared with a thread started by a test.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
