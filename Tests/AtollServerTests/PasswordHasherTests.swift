import AtollServer
import Foundation
import Testing

@Suite("Password hashing")
struct PasswordHasherTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let password: String
        let salt: String
        let rounds: Int
        let hex: String
        var testDescription: String { "\(password.debugDescription) / \(salt.debugDescription), c=\(rounds)" }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 6070: PBKDF2-HMAC-SHA1.
    static let rfc6070: [Vector] = [
        Vector(password: "password", salt: "salt", rounds: 1, hex: "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        Vector(password: "password", salt: "salt", rounds: 2, hex: "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        Vector(password: "password", salt: "salt", rounds: 4096, hex: "4b007901b765489abead49d926f721d065a429c1"),
        Vector(
            password: "passwordPASSWORDpassword", salt: "saltSALTsaltSALTsaltSALTsaltSALTsalt", rounds: 4096,
            hex: "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
        Vector(password: "pass\0word", salt: "sa\0lt", rounds: 4096, hex: "56fa6aa75548099dcc37d7f03425e0c3"),
    ]

    /// RFC 7914 §11: PBKDF2-HMAC-SHA256.
    static let rfc7914: [Vector] = [
        Vector(
            password: "passwd", salt: "salt", rounds: 1,
            hex: "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
        Vector(
            password: "Password", salt: "NaCl", rounds: 80000,
            hex: "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
    ]

    @Test("PBKDF2-HMAC-SHA1 matches RFC 6070", arguments: rfc6070)
    func pbkdf2SHA1MatchesRFC6070(_ vector: Vector) throws {
        let key = try PasswordHasher.pbkdf2(
            password: Array(vector.password.utf8), salt: Array(vector.salt.utf8), rounds: vector.rounds,
            byteCount: vector.hex.count / 2, digest: .insecureSHA1)
        #expect(Self.hex(key) == vector.hex)
    }

    @Test("PBKDF2-HMAC-SHA256 matches RFC 7914", arguments: rfc7914)
    func pbkdf2SHA256MatchesRFC7914(_ vector: Vector) throws {
        let key = try PasswordHasher.pbkdf2(
            password: Array(vector.password.utf8), salt: Array(vector.salt.utf8), rounds: vector.rounds,
            byteCount: vector.hex.count / 2)
        #expect(Self.hex(key) == vector.hex)
    }

    @Test func aHashVerifiesItsPasswordAndNoOther() throws {
        let hasher = PasswordHasher(rounds: PasswordHasher.minimumRounds)
        let stored = try hasher.hash("correct horse")
        #expect(hasher.verify("correct horse", against: stored))
        #expect(!hasher.verify("correct horse ", against: stored))
        #expect(!hasher.verify("", against: stored))
    }

    @Test func hashesAreSaltedAndRecordAtLeastOneHundredThousandRounds() throws {
        let hasher = PasswordHasher(rounds: 1)  // raised to the minimum
        let first = try hasher.hash("same password")
        let second = try hasher.hash("same password")
        #expect(first != second)
        let parts = first.split(separator: "$")
        #expect(parts.count == 4)
        #expect(parts[0] == "pbkdf2-sha256")
        #expect(Int(parts[1])! >= 100_000)
        #expect(Data(base64Encoded: String(parts[2]))?.count == 16)
        #expect(PasswordHasher.defaultRounds >= 100_000)
    }

    @Test func aMalformedStoredHashNeverMatches() {
        let hasher = PasswordHasher()
        for stored in ["", "pbkdf2-sha256$", "pbkdf2-sha256$0$AAAA$AAAA", "md5$1$AAAA$AAAA", "pbkdf2-sha256$1$!!$AAAA"] {
            #expect(!hasher.verify("password", against: stored), "\(stored)")
        }
    }
}
