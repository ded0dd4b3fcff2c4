import AtollRealmFile
import Foundation

/// Locates the Realm-written fixture files: copied from realm-core's test folder, or written by realm-core 14.14.0
/// for this project (`allTypes_v24*`, `empty_schema_v3`).
enum Fixtures {
    static let directory: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    static let all = [
        "test_upgrade_database_4_22.realm", "test_upgrade_database_1000_22.realm",
        "test_upgrade_database_4_23.realm", "test_upgrade_database_1000_23.realm",
        "downgrade_asymmetric.realm", "test_flx_metadata_tables_v1.realm",
        "sync-metadata-v5.realm", "sync-metadata-v6.realm",
        "allTypes_v24.realm", "empty_schema_v3.realm",
    ]

    /// The encrypted copy of `allTypes_v24.realm` and its key (64 bytes, byte i = i).
    static let encryptedAllTypes = "allTypes_v24_encrypted.realm"
    static let allTypesKey = Data((0..<64).map { UInt8($0) })

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    static func open(_ name: String) throws -> RealmFile { try RealmFile(path: path(name)) }
    static func data(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(name))) }
}
