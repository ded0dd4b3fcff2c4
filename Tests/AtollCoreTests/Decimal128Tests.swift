import AtollCore
import Foundation
import Testing

/// A case from the BSON corpus (mongodb/specifications, bson-corpus/tests/decimal128-1.json):
/// a whole BSON document `{d: <decimal>}` in hex, its canonical string, and other spellings.
struct CorpusCase: Sendable, CustomTestStringConvertible {
    var bson: String
    var string: String
    var degenerate: [String] = []
    /// The bytes do not survive a trip through the string (NaN payloads, non-canonical values).
    var lossy = false

    /// The 16 value bytes: after length (4), type (1) and key "d\0" (2).
    var bytes: [UInt8] {
        let all = stride(from: 0, to: bson.count, by: 2).map { offset in
            let start = bson.index(bson.startIndex, offsetBy: offset)
            return UInt8(bson[start...bson.index(after: start)], radix: 16) ?? 0
        }
        return Array(all[7..<23])
    }

    var testDescription: String { string }
}

let corpus: [CorpusCase] = [
    CorpusCase(bson: "180000001364000000000000000000000000000000007C00", string: "NaN", degenerate: ["nan", "nAn"]),
    CorpusCase(bson: "18000000136400000000000000000000000000000000FC00", string: "NaN", degenerate: ["-NaN"], lossy: true),
    CorpusCase(bson: "180000001364000000000000000000000000000000007E00", string: "NaN", lossy: true),
    CorpusCase(bson: "18000000136400000000000000000000000000000000FE00", string: "NaN", lossy: true),
    CorpusCase(bson: "180000001364001200000000000000000000000000007E00", string: "NaN", lossy: true),
    CorpusCase(
        bson: "180000001364000000000000000000000000000000007800", string: "Infinity",
        degenerate: ["+infinity", "infinity", "infiniTY", "inf", "inF"]
    ),
    CorpusCase(
        bson: "18000000136400000000000000000000000000000000F800", string: "-Infinity",
        degenerate: ["-infinity", "-infiniTy", "-Inf", "-inf", "-inF"]
    ),
    CorpusCase(bson: "180000001364000000000000000000000000000000106C00", string: "0", lossy: true),
    CorpusCase(bson: "18000000136400DCBA9876543210DEADBEEF00000010EC00", string: "-0", lossy: true),
    CorpusCase(bson: "18000000136400FFFFFFFFFFFFFFFFFFFFFFFFFFFF116C00", string: "0E+3", lossy: true),
    CorpusCase(bson: "18000000136400F2AF967ED05C82DE3297FF6FDE3CF22F00", string: "0.000001234567890123456789012345678901234"),
    CorpusCase(bson: "18000000136400D204000000000000000000000000343000", string: "0.001234"),
    CorpusCase(bson: "1800000013640040EF5A07000000000000000000002A3000", string: "0.00123400000"),
    CorpusCase(bson: "1800000013640001000000000000000000000000003E3000", string: "0.1"),
    CorpusCase(bson: "18000000136400F2AF967ED05C82DE3297FF6FDE3CFC2F00", string: "0.1234567890123456789012345678901234"),
    CorpusCase(bson: "180000001364000000000000000000000000000000403000", string: "0"),
    CorpusCase(bson: "18000000136400000000000000000000000000000040B000", string: "-0"),
    CorpusCase(bson: "1800000013640000000000000000000000000000003EB000", string: "-0.0"),
    CorpusCase(bson: "180000001364000200000000000000000000000000403000", string: "2"),
    CorpusCase(bson: "18000000136400D0070000000000000000000000003A3000", string: "2.000"),
    CorpusCase(
        bson: "18000000136400F2AF967ED05C82DE3297FF6FDE3C403000", string: "1234567890123456789012345678901234",
        degenerate: ["+1234567890123456789012345678901234"]
    ),
    CorpusCase(bson: "18000000136400FFFFFFFF638E8D37C087ADBE09ED010000", string: "9.999999999999999999999999999999999E-6143"),
    CorpusCase(bson: "180000001364000100000000000000000000000000000000", string: "1E-6176", degenerate: ["10E-6177"]),
    CorpusCase(bson: "180000001364000100000000000000000000000000008000", string: "-1E-6176"),
    CorpusCase(bson: "18000000136400F2AF967ED05C82DE3297FF6FDE3CF02F00", string: "1.234567890123456789012345678901234E-7"),
    CorpusCase(bson: "1800000013640064000000000000000000000000002CB000", string: "-1.00E-8", degenerate: ["-100E-10"]),
    CorpusCase(bson: "180000001364000000000000000000000000000000205F00", string: "0E+6000"),
    CorpusCase(bson: "1800000013640000000000000000000000000000007A2B00", string: "0E-611"),
    CorpusCase(bson: "180000001364000100000000000000000000000000463000", string: "1E+3", degenerate: ["1E3", "1e+3"]),
    CorpusCase(bson: "180000001364001A04000000000000000000000000423000", string: "1.050E+4"),
    CorpusCase(bson: "180000001364006900000000000000000000000000423000", string: "1.05E+3"),
    CorpusCase(bson: "18000000136400FFFFFFFFFFFFFFFFFFFFFFFFFFFF403000", string: "5192296858534827628530496329220095"),
    CorpusCase(bson: "18000000136400000000000A5BC138938D44C64D31FE5F00", string: "1.000000000000000000000000000000000E+6144"),
    CorpusCase(bson: "18000000136400FFFFFFFF638E8D37C087ADBE09EDFF5F00", string: "9.999999999999999999999999999999999E+6144"),
    CorpusCase(
        bson: "1800000013640079D9E0F9763ADA429D0200000000583000", string: "1.2345689012345789012345E+34",
        degenerate: ["12345689012345789012345E+12"]
    ),
    CorpusCase(
        bson: "180000001364000100000000000000000000000000722800", string: "1E-999",
        degenerate: ["." + String(repeating: "0", count: 998) + "1"]
    ),
    CorpusCase(bson: "180000001364000A00000000000000000000000000FE5F00", string: "1.0E+6112", degenerate: ["1E6112"]),
    CorpusCase(
        bson: "18000000136400000000000A5BC138938D44C64D31CC3700", string: "1.000000000000000000000000000000000E+999",
        degenerate: ["1" + String(repeating: "0", count: 999)]
    ),
    CorpusCase(bson: "180000001364000000000000000000000000000000FE5F00", string: "0E+6111", degenerate: ["0E+9999999999"]),
    CorpusCase(bson: "180000001364000000000000000000000000000000000000", string: "0E-6176", degenerate: ["0E-9999999999"]),
    CorpusCase(bson: "180000001364000000000000000000000000000000FEDF00", string: "-0E+6111", degenerate: ["-0E+9999999999"]),
    CorpusCase(bson: "180000001364000000000000000000000000000000008000", string: "-0E-6176", degenerate: ["-0E-9999999999"]),
]

private func d(_ string: String) throws -> Decimal128 { try Decimal128(string: string) }

@Suite("Decimal128")
struct Decimal128Tests {
    // MARK: Encoding

    @Test(arguments: corpus)
    func corpusBytesPrintAsCanonicalString(vector: CorpusCase) {
        #expect(Decimal128(bsonBytes: vector.bytes).description == vector.string)
    }

    @Test(arguments: corpus.filter { !$0.lossy })
    func corpusCanonicalStringParsesToCorpusBytes(vector: CorpusCase) throws {
        #expect(try d(vector.string).bsonBytes() == vector.bytes)
    }

    @Test(arguments: corpus.filter { !$0.degenerate.isEmpty })
    func corpusOtherSpellingsParseToCorpusBytes(vector: CorpusCase) throws {
        for spelling in vector.degenerate {
            #expect(try d(spelling).bsonBytes() == vector.bytes, "\(spelling.prefix(40))")
        }
    }

    @Test(arguments: [
        ("0", 0x3040_0000_0000_0000, 0),
        ("1", 0x3040_0000_0000_0000, 1),
        ("-1", 0xB040_0000_0000_0000, 1),
        ("1.5", 0x303E_0000_0000_0000, 15),
        ("1E+3", 0x3046_0000_0000_0000, 1),
        ("9999999999999999999999999999999999", 0x3041_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF),
        ("NaN", 0x7C00_0000_0000_0000, 0),
        ("-Infinity", 0xF800_0000_0000_0000, 0),
    ] as [(String, UInt64, UInt64)])
    func bidBitsMatchKnownValues(string: String, high: UInt64, low: UInt64) throws {
        let value = try d(string)
        #expect(value.bid.high == high && value.bid.low == low)
        #expect(Decimal128(bid: high, low: low).description == string)
    }

    @Test func defaultValueIsZero() {
        #expect(Decimal128().bid == (0x3040_0000_0000_0000, 0))
        #expect(Decimal128().description == "0")
        #expect(Decimal128.zero == Decimal128())
    }

    @Test(arguments: [
        (0x3040_0000_0000_0000, 0), (0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF), (0x6C11_FFFF_FFFF_FFFF, 42), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210),
    ] as [(UInt64, UInt64)])
    func bitsSurviveBsonBytesUnchanged(high: UInt64, low: UInt64) {
        let value = Decimal128(bid: high, low: low)
        let bytes = value.bsonBytes()
        #expect(bytes.count == 16)
        #expect(bytes[0] == UInt8(truncatingIfNeeded: low) && bytes[15] == UInt8(high >> 56))
        #expect(Decimal128(bsonBytes: bytes).bid == (high, low))
    }

    @Test(arguments: [
        (0x3041_ED09_BEAD_87C0, 0x378D_8E64_0000_0000, "0"),  // 10^34, one past the largest coefficient
        (0x3041_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, "0"),
        (0xB03F_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, "-0.0"),
    ] as [(UInt64, UInt64, String)])
    func oversizedCoefficientReadsAsZero(high: UInt64, low: UInt64, string: String) {
        let value = Decimal128(bid: high, low: low)
        #expect(value.description == string)
        #expect(value == 0)
    }

    @Test func wrongBsonByteCountTraps() async {
        await #expect(processExitsWith: .failure) { _ = Decimal128(bsonBytes: [0, 1, 2]) }
    }

    // MARK: Parsing

    @Test(arguments: [
        ("1.5", "1.5"), ("-0.000123", "-0.000123"), ("1e10", "1E+10"), ("1.23E-5", "0.0000123"),
        ("123.4500", "123.4500"), (".5", "0.5"), ("5.", "5"), ("+7", "7"), ("-0", "-0"), ("0.0", "0.0"),
        ("00012", "12"), ("1E-7", "1E-7"), ("0.0000001", "1E-7"), ("12E-8", "1.2E-7"), ("1E+0", "1"),
        ("Inf", "Infinity"), ("-Infinity", "-Infinity"), ("NAN", "NaN"), ("sNaN", "NaN"),
    ])
    func parsingAcceptsDecimalLiterals(input: String, canonical: String) throws {
        #expect(try d(input).description == canonical)
    }

    @Test(arguments: [
        ("12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"),  // tie, even stays
        ("12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"),  // tie, odd goes up
        ("1234567890123456789012345678901234.500000000000001", "1234567890123456789012345678901235"),
        ("1234567890123456789012345678901234.4999999999999999", "1234567890123456789012345678901234"),
        ("-99999999999999999999999999999999995", "-1.000000000000000000000000000000000E+35"),
        ("0.12345678901234567890123456789012345678901234567890", "0.1234567890123456789012345678901235"),
    ])
    func parsingRoundsHalfEvenTo34Digits(input: String, rounded: String) throws {
        #expect(try d(input).description == rounded)
    }

    @Test(arguments: [
        ("1E+6145", "Infinity"), ("-1E+6145", "-Infinity"), ("1E+6144", "1.000000000000000000000000000000000E+6144"),
        ("1E-6177", "0E-6176"), ("5E-6177", "0E-6176"), ("6E-6177", "1E-6176"), ("15E-6177", "2E-6176"),
        ("1E+99999999999999999999", "Infinity"), ("1E-99999999999999999999", "0E-6176"),
    ])
    func parsingBeyondTheExponentRangeOverflowsOrUnderflows(input: String, result: String) throws {
        #expect(try d(input).description == result)
    }

    @Test(arguments: [
        ("", .empty),
        ("abc", .unexpectedCharacter("a", offset: 0)),
        ("1.2.3", .unexpectedCharacter(".", offset: 3)),
        (" 1", .unexpectedCharacter(" ", offset: 0)),
        ("1 ", .unexpectedCharacter(" ", offset: 1)),
        ("--1", .unexpectedCharacter("-", offset: 1)),
        ("1e5x", .unexpectedCharacter("x", offset: 3)),
        ("1e5.0", .unexpectedCharacter(".", offset: 3)),
        ("1,5", .unexpectedCharacter(",", offset: 1)),
        ("Infinit", .unexpectedCharacter("I", offset: 0)),
        ("é1", .unexpectedCharacter("é", offset: 0)),
        ("1½", .unexpectedCharacter("½", offset: 1)),
        (".", .missingDigits), ("-", .missingDigits), ("+.", .missingDigits), ("e5", .missingDigits),
        ("1e", .missingExponentDigits), ("1E+", .missingExponentDigits), ("-.5e-", .missingExponentDigits),
    ] as [(String, Decimal128Error.Reason)])
    func parsingRejectsMalformedInput(input: String, reason: Decimal128Error.Reason) {
        #expect(throws: Decimal128Error(input: input, reason: reason)) { try Decimal128(string: input) }
    }

    @Test(arguments: [
        ("", #"Invalid Decimal128 "": the string is empty"#),
        ("1.2.3", #"Invalid Decimal128 "1.2.3": unexpected '.' at offset 3"#),
        ("1\t", #"Invalid Decimal128 "1\#t": unexpected U+0009 at offset 1"#),
        ("-", #"Invalid Decimal128 "-": no digits"#),
        ("2e+", #"Invalid Decimal128 "2e+": no digits after the exponent marker"#),
    ])
    func errorMessageSaysWhatIsWrong(input: String, message: String) {
        let error = #expect(throws: Decimal128Error.self) { try Decimal128(string: input) }
        #expect(error?.description == message)
        #expect(error?.localizedDescription == message)
    }

    // MARK: Equality, hashing, order

    @Test(arguments: [
        ("1.0", "1.00"), ("0", "-0"), ("0E+5", "-0.000"), ("100", "1E+2"), ("1.5", "15E-1"),
        ("Infinity", "inf"), ("-Infinity", "-inf"), ("1234567890123456789012345678901234E+10", "1.234567890123456789012345678901234E+43"),
    ])
    func equalityIsNumeric(a: String, b: String) throws {
        let x = try d(a), y = try d(b)
        #expect(x == y)
        #expect(x.hashValue == y.hashValue)
        #expect(Set([x, y]).count == 1)
    }

    @Test(arguments: [
        ("1", "1.000000000000000000000000000000001"), ("1", "-1"), ("Infinity", "-Infinity"),
        ("1E-6176", "0"), ("1E+6111", "Infinity"), ("NaN", "1"),
    ])
    func differentNumbersAreUnequal(a: String, b: String) throws {
        #expect(try d(a) != d(b))
    }

    @Test func nanIsUnequalToItself() throws {
        let nan = try d("NaN")
        #expect(nan != nan)
        #expect(!(nan == nan))
        #expect(nan.isNaN)
    }

    @Test func orderIsNumeric() throws {
        let ascending = try [
            "-Infinity", "-1E+6144", "-1E+10", "-1.5", "-1.49", "-0.0001", "0", "1E-6176", "0.5", "1",
            "1.000000000000000000000000000000001", "1.01", "2", "1E+100", "9.999999999999999999999999999999999E+6144", "Infinity",
        ].map(d)
        for (smaller, larger) in zip(ascending, ascending.dropFirst()) {
            #expect(smaller < larger, "\(smaller) < \(larger)")
            #expect(!(larger < smaller), "!(\(larger) < \(smaller))")
        }
        #expect(ascending.reversed().sorted() == ascending)
    }

    @Test func nanSortsBeforeEverything() throws {
        let nan = try d("NaN"), minusInfinity = try d("-Infinity")
        #expect(nan < minusInfinity)
        #expect(!(minusInfinity < nan))
        #expect(!(nan < nan))
        let sorted = try ["1", "NaN", "-Infinity", "0"].map(d).sorted()
        #expect(sorted.map(\.description) == ["NaN", "-Infinity", "0", "1"])
    }

    @Test func zeroesOfEitherSignAreNotOrdered() throws {
        #expect(try !(d("-0") < d("0")) && !(d("0") < d("-0")))
        #expect(try !(d("0E+10") < d("0E-10")))
    }

    // MARK: Arithmetic

    @Test(arguments: [
        ("1", "2", "3"), ("1.5", "0.25", "1.75"), ("1.0", "1.00", "2.00"), ("1E+3", "1", "1001"), ("-5", "5", "0"),
        ("-0", "-0", "-0"), ("-0", "0", "0"), ("0E+5", "1.5", "1.5"), ("0E-5", "1.5", "1.50000"),
        ("1E+40", "1", "1.000000000000000000000000000000000E+40"),
        ("9999999999999999999999999999999999", "1", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999999", "0.5", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999998", "0.5", "9999999999999999999999999999999998"),
        ("1E+50", "-6E+16", "9.999999999999999999999999999999994E+49"),
        ("1E+50", "-5E+15", "1.000000000000000000000000000000000E+50"),
        ("1.000000000000000000000000000000001E+60", "-1E+10", "1.000000000000000000000000000000001E+60"),
        ("1E+60", "-5E+20", "1.000000000000000000000000000000000E+60"),
        ("1E+60", "-501E+23", "9.999999999999999999999999999999999E+59"),  // digits far below break the tie
        ("1E+6111", "9E+6111", "1.0E+6112"),
        ("9.999999999999999999999999999999999E+6144", "1E+6111", "Infinity"),
        ("1E-6176", "-1E-6176", "0E-6176"),
        ("Infinity", "1", "Infinity"), ("Infinity", "-Infinity", "NaN"), ("NaN", "1", "NaN"),
    ])
    func additionRoundsHalfEven(a: String, b: String, sum: String) throws {
        #expect(try (d(a) + d(b)).description == sum)
        #expect(try (d(b) + d(a)).description == sum)
    }

    @Test(arguments: [
        ("3", "2", "1"), ("2", "3", "-1"), ("1.50", "1.5", "0.00"), ("0.1", "0.3", "-0.2"),
        ("-0", "0", "-0"), ("1E+34", "0.5", "1.000000000000000000000000000000000E+34"),
        ("Infinity", "Infinity", "NaN"), ("-Infinity", "Infinity", "-Infinity"),
    ])
    func subtractionIsAdditionOfTheNegation(a: String, b: String, difference: String) throws {
        #expect(try (d(a) - d(b)).description == difference)
    }

    @Test(arguments: [
        ("2", "3", "6"), ("1.5", "1.5", "2.25"), ("-2", "0.5", "-1.0"), ("1.0", "1.0", "1.00"), ("1E+3", "1E+3", "1E+6"),
        ("99999999999999999", "99999999999999999", "9999999999999999800000000000000001"),
        ("9999999999999999999999999999999999", "9999999999999999999999999999999999", "9.999999999999999999999999999999998E+67"),
        ("3333333333333333333333333333333333", "3", "9999999999999999999999999999999999"),
        ("3333333333333333333333333333333334", "3", "1.000000000000000000000000000000000E+34"),
        ("5000000000000000000000000000000010", "125000000000000000000000000300", "6.250000000000000000000000015000013E+62"),
        ("1E+6000", "1E+6000", "Infinity"), ("1E-6000", "-1E-6000", "-0E-6176"), ("0", "-5", "-0"),
        ("1.1E-6170", "1E-6", "1E-6176"), ("Infinity", "-2", "-Infinity"), ("Infinity", "0", "NaN"),
    ])
    func multiplicationRoundsHalfEven(a: String, b: String, product: String) throws {
        #expect(try (d(a) * d(b)).description == product)
        #expect(try (d(b) * d(a)).description == product)
    }

    @Test(arguments: [
        ("1", "3", "0.3333333333333333333333333333333333"), ("2", "3", "0.6666666666666666666666666666666667"),
        ("-1", "7", "-0.1428571428571428571428571428571429"), ("1", "4", "0.25"), ("10", "4", "2.5"),
        ("1.00", "2", "0.50"), ("6", "2", "3"), ("1E+10", "1E-10", "1E+20"), ("1", "32", "0.03125"),
        ("9633580866", "759163", "12689.73970807323328455153899755389"),  // ...388|5000… plus a far remainder
        ("1234567890123456789012345678901234", "1E-6000", "1.234567890123456789012345678901234E+6033"),
        ("1", "9.999999999999999999999999999999999E+6144", "1.0000000000000000000000000000000E-6145"),
        ("1", "0", "Infinity"), ("-1", "0", "-Infinity"), ("1", "-0", "-Infinity"), ("0", "0", "NaN"), ("0", "5", "0"),
        ("1", "Infinity", "0E-6176"), ("Infinity", "-3", "-Infinity"), ("Infinity", "Infinity", "NaN"),
    ])
    func divisionRoundsHalfEven(a: String, b: String, quotient: String) throws {
        #expect(try (d(a) / d(b)).description == quotient)
    }

    @Test func compoundAssignmentMatchesOperators() throws {
        var x = try d("10")
        x += 5
        x -= try d("0.5")
        x *= 2
        x /= 4
        #expect(x.description == "7.25")
    }

    @Test func centsAddUpExactly() throws {
        let cent = try d("0.01")
        let dollar = (0..<100).reduce(Decimal128.zero) { sum, _ in sum + cent }
        #expect(dollar == 1)
        #expect(dollar.description == "1.00")
    }

    @Test func negationFlipsOnlyTheSign() throws {
        #expect(try (-d("1.50")).description == "-1.50")
        #expect(try (-d("-1.50")).description == "1.50")
        #expect(try (-d("0")).description == "-0")
        #expect(try (-d("Infinity")).description == "-Infinity")
        var y = try d("2")
        y.negate()
        #expect(y == -2)
    }

    @Test func magnitudeClearsTheSign() throws {
        #expect(try d("-2.50").magnitude.description == "2.50")
        #expect(try d("-Infinity").magnitude.description == "Infinity")
        #expect(try d("3").magnitude.description == "3")
    }

    @Test(arguments: [
        (0x7C00_0000_0000_0000, true, false, false), (0x7E00_0000_0000_0000, true, true, false),
        (0xFE00_0000_0000_0000, true, true, false), (0x7800_0000_0000_0000, false, false, true),
        (0xF800_0000_0000_0000, false, false, true), (0x3040_0000_0000_0000, false, false, false),
    ] as [(UInt64, Bool, Bool, Bool)])
    func specialValueFlagsFollowTheBits(high: UInt64, nan: Bool, signaling: Bool, infinite: Bool) {
        let value = Decimal128(bid: high, low: 0)
        #expect(value.isNaN == nan && value.isSignaling == signaling && value.isInfinite == infinite)
    }

    // MARK: Conversions

    @Test(arguments: [
        ("1.5", 1.5), ("0.1", 0.1), ("-2.5E-3", -0.0025), ("123456789012345678901234567890", 1.2345678901234568e29),
        ("1E+400", .infinity), ("-1E+400", -.infinity), ("1E-400", 0), ("4.9E-324", .leastNonzeroMagnitude), ("-0", -0.0),
        ("9007199254740993", 9007199254740992), ("Infinity", .infinity),
    ] as [(String, Double)])
    func doubleValueIsNearest(string: String, double: Double) throws {
        let converted = try d(string).doubleValue
        #expect(converted == double && converted.sign == double.sign)
    }

    @Test func nanDoubleValueIsNaN() throws {
        #expect(try d("NaN").doubleValue.isNaN)
    }

    @Test(arguments: [
        (0.1, "0.1"), (2.0, "2"), (-0.0, "-0"), (1e16, "1E+16"), (1.5e-7, "1.5E-7"), (123.456, "123.456"),
        (Double.infinity, "Infinity"), (-Double.infinity, "-Infinity"), (Double.nan, "NaN"),
        (Double.greatestFiniteMagnitude, "1.7976931348623157E+308"), (.leastNonzeroMagnitude, "5E-324"),
    ])
    func doubleInitializerUsesTheShortestDigits(double: Double, string: String) {
        #expect(Decimal128(double).description == string)
        #expect(Decimal128(number: double).description == string)
    }

    @Test func doublesRoundTrip() {
        var state: UInt64 = 42
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let double = Double(bitPattern: state)
            guard double.isFinite else { continue }
            #expect(Decimal128(double).doubleValue.bitPattern == double.bitPattern, "\(double)")
        }
    }

    @Test(arguments: [(0, "0"), (-42, "-42"), (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808")])
    func intInitializerIsExact(value: Int, string: String) {
        #expect(Decimal128(value).description == string)
    }

    // The standard library's UInt128 as a BinaryInteger larger than 64 bits.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func exactlyInitializerRefusesRounding() {
        #expect(Decimal128(exactly: UInt128(10).power(38))?.description == "1.000000000000000000000000000000000E+38")
        #expect(Decimal128(exactly: UInt128(10).power(34) + 1) == nil)
        #expect(Decimal128(exactly: UInt128.max) == nil)
        #expect(Decimal128(exactly: Int64.min)?.description == "-9223372036854775808")
    }

    @Test(arguments: [
        ("3.14", "3.14"), ("-0.000123", "-0.000123"), ("1e100", "1E+100"), ("0", "0"),
        ("12345678901234567890123456789012345678", "1.234567890123456789012345678901235E+37"),
    ])
    func foundationDecimalConvertsByValue(decimal: String, expected: String) throws {
        let value = try #require(Decimal(string: decimal))
        #expect(Decimal128(value).description == expected)
    }

    @Test func foundationDecimalNaNBecomesNaN() {
        #expect(Decimal128(Decimal.nan).isNaN)
    }

    @Test func literalsBuildTheExpectedValues() throws {
        let integer: Decimal128 = 42
        let float: Decimal128 = 0.1
        let string: Decimal128 = "0.1234567890123456789012345678901234"
        #expect(integer.description == "42")
        #expect(float.description == "0.1")
        #expect(string.description == "0.1234567890123456789012345678901234")
        #expect(string.stringValue == string.description)
    }

    @Test func invalidStringLiteralTraps() async {
        await #expect(processExitsWith: .failure) {
            let value: Decimal128 = "12,5"
            _ = value
        }
    }

    @Test func codableUsesTheString() throws {
        let values = try ["1.50", "-1E+10", "NaN", "-Infinity"].map(d)
        let json = try JSONEncoder().encode(values)
        #expect(String(decoding: json, as: UTF8.self) == #"["1.50","-1E+10","NaN","-Infinity"]"#)
        let decoded = try JSONDecoder().decode([Decimal128].self, from: json)
        #expect(decoded.map(\.description) == ["1.50", "-1E+10", "NaN", "-Infinity"])
    }

    @Test func decodingRejectsAMalformedString() {
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data(#"["1.2.3"]"#.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription == #"Invalid Decimal128 "1.2.3": unexpected '.' at offset 3"#)
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private extension UInt128 {
    func power(_ exponent: Int) -> UInt128 { (0..<exponent).reduce(1) { result, _ in result * self } }
}
