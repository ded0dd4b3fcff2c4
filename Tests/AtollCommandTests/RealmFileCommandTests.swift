import ArgumentParser
@_spi(Testing) import Atoll
import AtollTesting
import Foundation
import Testing
@testable import atoll

/// `atoll realm-file`, parsed as an operator types it, on files realm-core wrote.
@Suite struct RealmFileCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AtollRealmFileTests/Fixtures")
    static let keyHex = (0..<64).map { String(format: "%02x", $0) }.joined()

    @Test func inspectReadsAnEncryptedFileWithItsKey() throws {
        let file = Self.fixtures.appendingPathComponent("allTypes_v24_encrypted.realm").path
        let inspect = try #require(try AtollCommand.parseAsRoot(["realm-file", "inspect", file, "--key", Self.keyHex]) as? RealmFileCommand.Inspect)
        let output = try inspect.output()
        #expect(output.contains("schema version: 7"))
        #expect(output.contains("AllTypes: 3 objects"))
        // Without the key, or with a malformed one, it says why.
        let keyless = try #require(try AtollCommand.parseAsRoot(["realm-file", "inspect", file]) as? RealmFileCommand.Inspect)
        #expect { try keyless.output() } throws: { "\($0)".contains("encrypted") }
        let short = try #require(try AtollCommand.parseAsRoot(["realm-file", "inspect", file, "--key", "abcd"]) as? RealmFileCommand.Inspect)
        #expect { try short.output() } throws: { "\($0)".contains("128 hexadecimal digits") }
    }

    @Test func convertWritesARealmThatOpens() throws {
        let folder = try TemporaryFolder("realm-file-command")
        defer { folder.remove() }
        let input = Self.fixtures.appendingPathComponent("allTypes_v24_encrypted.realm").path
        let output = folder.url.appendingPathComponent("converted.realm")
        let convert = try #require(try AtollCommand.parseAsRoot(
            ["realm-file", "convert", input, output.path, "--key", Self.keyHex, "--quiet"]) as? RealmFileCommand.Convert)
        try convert.run()
        let key = Data((0..<64).map { UInt8($0) })
        let realm = try Realm(configuration: Realm.Configuration(fileURL: output, encryptionKey: key, schemaVersion: 7, objectTypes: []))
        #expect(realm.dynamicObjects("AllTypes").count == 3)
        #expect(realm.dynamicObjects("Target").count == 5)
        // The input is untouched, and the output is not overwritten.
        #expect(!FileManager.default.fileExists(atPath: input + ".before-atoll"))
        let again = try #require(try AtollCommand.parseAsRoot(
            ["realm-file", "convert", input, output.path, "--key", Self.keyHex, "--quiet"]) as? RealmFileCommand.Convert)
        #expect(throws: Realm.Error.self) { try again.run() }
    }

    @Test func convertReportsProgress() throws {
        let folder = try TemporaryFolder("realm-file-command")
        defer { folder.remove() }
        var seen: [(Int, Int)] = []
        try Realm.convertRealmFile(at: Self.fixtures.appendingPathComponent("test_upgrade_database_1000_23.realm"),
                                   to: folder.url.appendingPathComponent("out.realm")) { seen.append(($0, $1)) }
        // That file's tables are core-level (no class_ prefix): no objects to convert, one report.
        #expect(seen.first?.0 == 0)
        #expect(seen.allSatisfy { $0.0 <= $0.1 })
        var progress: [(Int, Int)] = []
        try Realm.convertRealmFile(at: Self.fixtures.appendingPathComponent("allTypes_v24.realm"),
                                   to: folder.url.appendingPathComponent("all.realm")) { progress.append(($0, $1)) }
        #expect(progress.first?.0 == 0)
        #expect(progress.last.map { $0.0 == $0.1 } == true)
        #expect(progress.last?.1 == 3 + 5 + 5 + 2 + 2 + 2)
    }
}
