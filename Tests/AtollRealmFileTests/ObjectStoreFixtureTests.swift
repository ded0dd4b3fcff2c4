import AtollRealmFile
import Foundation
import Testing

/// Object-store level fixtures: class tables, the `metadata` table, embedded and asymmetric tables.
@Suite struct ObjectStoreFixtureTests {
    @Test func asymmetricTableIsFlagged() throws {
        let file = try Fixtures.open("downgrade_asymmetric.realm")
        #expect(file.formatVersion == 22)
        let ephemeral = try file.table(named: "ephemeral")
        let persistent = try file.table(named: "persistent")
        #expect(ephemeral.kind == .asymmetric)
        #expect(persistent.kind == .topLevel)
        #expect(persistent.primaryKey == "_id")
        #expect(try persistent.allObjects().map { $0["_id"] } == [.string("uno"), .string("dos"), .string("tres")])
    }

    @Test func flexibleSyncSubscriptionStore() throws {
        let file = try Fixtures.open("test_flx_metadata_tables_v1.realm")
        #expect(file.formatVersion == 22)
        #expect(file.schemaVersion == 1)
        #expect(Set(file.tables.map(\.name)) == ["flx_metadata", "flx_subscription_sets", "flx_subscriptions", "metadata", "class_TopLevel"])
        #expect(file.classTables.map(\.className) == ["TopLevel"])

        let topLevel = try file.table(named: "TopLevel")
        #expect(topLevel.name == "class_TopLevel")
        #expect(topLevel.primaryKey == "_id")
        #expect(topLevel.column(named: "_id")?.type == .objectId)
        #expect(topLevel.column(named: "queryable_int_field")?.type == .int)
        #expect(topLevel.column(named: "queryable_int_field")?.isNullable == true)
        #expect(topLevel.column(named: "queryable_str_field")?.type == .string)
        #expect(topLevel.column(named: "non_queryable_field")?.type == .string)
        #expect(try topLevel.objectCount() == 0)

        let sets = try file.table(named: "flx_subscription_sets")
        let subscriptionsColumn = try #require(sets.column(named: "subscriptions"))
        #expect(subscriptionsColumn.collection == .list && subscriptionsColumn.targetTable == "flx_subscriptions")
        let set = try #require(try sets.allObjects().first)
        #expect(set["version"] == .int(1))
        #expect(set["state"] == .int(3))
        #expect(set["snapshot_version"] == .int(4))
        #expect(set["error"] == .null)

        let subscriptions = try file.table(named: "flx_subscriptions")
        #expect(subscriptions.kind == .embedded)
        let link = try #require(set["subscriptions"]?.elements?.first?.linkValue)
        let subscription = try #require(try subscriptions.object(key: link.objectKey))
        #expect(subscription["query"] == .string("TRUEPREDICATE"))
        #expect(subscription["object_class"] == .string("TopLevel"))
        #expect(subscription["name"] == .null)
        #expect(subscription["id"] == .objectId(RealmObjectId(hex: "62742ab959d7f2e48f59f75d")!))
        #expect(subscription["created_at"] == .timestamp(RealmTimestamp(seconds: 1_651_780_281, nanoseconds: 787_344_000)))
        #expect(subscription.backlinkCount == 1)
        #expect(try file.table(named: "flx_metadata").allObjects().first?["schema_version"] == .int(2))
    }

    static let syncClassNames = ["AppMetadata", "FileActionMetadata", "UserIdentity", "UserMetadata", "current_user_identity"]

    @Test func syncMetadataVersion5() throws {
        let file = try Fixtures.open("sync-metadata-v5.realm")
        #expect(file.formatVersion == 22)
        #expect(file.schemaVersion == 5)
        #expect(Set(Self.syncClassNames).isSubset(of: file.classTables.map(\.className)))
        let users = try file.table(named: "UserMetadata")
        let identities = try #require(users.column(named: "identities"))
        #expect(identities.collection == .list && identities.type == .link && identities.targetTable == "class_UserIdentity")
        #expect(!identities.isNullable)
        #expect(users.column(named: "marked_for_removal")?.type == .bool)
        let user = try #require(try users.allObjects().first)
        #expect(user["identity"] == .string("metadata migration test"))
        #expect(user["marked_for_removal"] == .bool(false))
        #expect(user["refresh_token"]?.stringValue?.hasPrefix("WyJhbGciLCJIUzI1NiJd.") == true)
        #expect(try file.table(named: "current_user_identity").allObjects().first?["current_user_identity"] == .string("metadata migration test"))
        #expect(try file.table(named: "FileActionMetadata").primaryKey == "original_name")
    }

    @Test func syncMetadataVersion6() throws {
        let file = try Fixtures.open("sync-metadata-v6.realm")
        #expect(file.formatVersion == 23)
        #expect(file.schemaVersion == 6)
        #expect(Set(Self.syncClassNames).isSubset(of: file.classTables.map(\.className)))
        let users = try file.table(named: "UserMetadata")
        #expect(users.column(named: "local_realm_paths")?.collection == .set)
        #expect(try users.objectCount() == 13)
        let identityTable = try file.table(named: "UserIdentity")
        let identities = try identityTable.allObjects()
        #expect(identities.map { $0["id"] } == [.string("identity 1"), .string("shared identity"), .string("identity 2")])

        // Every identity link resolves, and the backlink counts add up to the links made.
        var linksPerKey: [Int64: Int] = [:]
        for user in try users.allObjects() {
            for element in user["identities"]?.elements ?? [] {
                let link = try #require(element.linkValue)
                #expect(link.table == "class_UserIdentity")
                #expect(try identityTable.object(key: link.objectKey) != nil)
                linksPerKey[link.objectKey, default: 0] += 1
            }
        }
        for identity in identities { #expect(identity.backlinkCount == linksPerKey[identity.key, default: 0]) }
        let first = try #require(try users.allObjects().first { $0["identity"] == .string("first logged in, second logged out") })
        #expect(first["provider_type"] == .string("a"))
    }

    @Test(arguments: Fixtures.all)
    func inMemoryCopyReadsTheSame(name: String) throws {
        let mapped = try Fixtures.open(name)
        let copied = try RealmFile(data: Fixtures.data(name))
        #expect(mapped.tables.map(\.columns) == copied.tables.map(\.columns))
        for (a, b) in zip(mapped.tables, copied.tables) { #expect(try a.allObjects() == b.allObjects()) }
    }
}
