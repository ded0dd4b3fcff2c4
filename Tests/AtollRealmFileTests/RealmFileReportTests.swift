import AtollRealmFile
import Foundation
import Testing

/// What `atoll realm-file inspect` prints and `export` writes, on the Realm-written fixtures.
@Suite struct RealmFileReportTests {
    @Test func inspectListsClassesPropertiesCountsAndRealmsOwnTables() throws {
        let text = try RealmFileReport.inspect(Fixtures.open("sync-metadata-v6.realm"))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.prefix(3) == ["format: 23", "schema version: 6", "classes: 5"])
        #expect(lines.contains("  UserMetadata: 13 objects"))
        #expect(lines.contains("  current_user_identity: 1 object"))
        #expect(lines.contains("    id: int, primary key"), "AppMetadata's primary key")
        #expect(lines.contains("    new_name: string?"))
        #expect(lines.contains("    identities: list of UserIdentity"), "a link list names its class")
        #expect(lines.contains("    local_realm_paths: set of string"))
        #expect(lines.suffix(2) == ["other tables: metadata", "flexible sync subscriptions: no"])

        let flexible = try RealmFileReport.inspect(Fixtures.open("test_flx_metadata_tables_v1.realm"))
        #expect(flexible.hasSuffix("other tables: flx_metadata, flx_subscription_sets, flx_subscriptions, metadata\nflexible sync subscriptions: yes"))
    }

    @Test func exportWritesOneRelaxedExtendedJSONDocumentPerObject() throws {
        let file = try Fixtures.open("test_upgrade_database_4_23.realm")
        var lines: [String] = []
        try RealmFileReport.export(file, className: "table") { lines.append($0) }
        #expect(lines.count == 40)
        #expect(lines.first == #"{"id":0,"link":1}"#, "a link to a class with a primary key is that key")

        var mixed: [String] = []
        try RealmFileReport.export(file, className: "table_for_mixed") { mixed.append($0) }
        let document = try #require(mixed.first)
        #expect(document.contains(#"{"$oid":"abcdefabcdefabcdefabcdef"}"#))
        #expect(document.contains(#""\u0000\u0000\u0001""#), "control characters are escaped")
        #expect(document.contains(#"{"$binary":{"base64":"AAAAAAAAAAAAAAAAAAAAAA==","subType":"04"}}"#), "a UUID")
        for line in lines + mixed { #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any]) }
    }

    @Test func exportOfEveryClassNamesEachObjectsClass() throws {
        var lines: [String] = []
        try RealmFileReport.export(Fixtures.open("sync-metadata-v6.realm"), className: nil) { lines.append($0) }
        #expect(lines.first == #"{"class":"UserIdentity","object":{"id":"identity 1","provider_type":"a"}}"#)
        #expect(lines.count == 3 + 13 + 1)
        let dictionary = try #require(lines.compactMap { try? RealmFileReportTests.object($0) }.first { $0["class"] as? String == "UserMetadata" })
        #expect((dictionary["object"] as? [String: Any])?["marked_for_removal"] as? Bool == false)
    }

    @Test func datesBinariesAndMixedDictionariesInFormat22() throws {
        var lines: [String] = []
        try RealmFileReport.export(Fixtures.open("test_upgrade_database_4_22.realm"), className: "table") { lines.append($0) }
        let line = try #require(lines.first)
        #expect(line.contains(#""eight":{"$date":"1970-01-01T00:00:04.000Z"}"#))
        #expect(line.contains(#""nine":47"#), "the link in the dictionary is the target's primary key")
        #expect(line.contains(#"{"$binary":{"base64":"UGF1bAA=","subType":"00"}}"#), "\"Paul\" with the NUL realm-core kept")
    }

    @Test func anUnknownClassIsNotFound() throws {
        #expect(throws: RealmFileError.self) {
            try RealmFileReport.export(Fixtures.open("sync-metadata-v6.realm"), className: "Nope") { _ in }
        }
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}
