import CAtollCipher
import Foundation
import GRDB
import GRDBSQLite

extension Connection {
    /// How large an encrypted connection's page cache may grow (SQLite's default is 2 MiB). A
    /// plaintext file is read through the memory map, which every connection shares, but a page
    /// of an encrypted file is decrypted on each cache miss: the cache is what keeps repeated
    /// reads from decrypting the same pages again. It grows only as pages are read.
    static let encryptedCacheKiB = 16_384

    /// A GRDB queue on the file at `path`: as is without a key; with one, through the encrypting
    /// VFS shim, keyed before SQLite reads a byte. Every SQLite connection Atoll makes to a realm
    /// file goes through here, so none can miss the key.
    ///
    /// An encrypted connection keeps its temporary tables, sorts and statement journals in
    /// memory (they would otherwise be plaintext files), and sets WAL mode itself (GRDB's WAL
    /// set-up looks for the log by the name it was given, a URI here). Its page cache may grow
    /// to `encryptedCacheKiB`.
    static func databaseQueue(path: String, key: EncryptionKey?,
                              _ configure: (inout GRDB.Configuration) -> Void = { _ in }) throws -> DatabaseQueue {
        var config = GRDB.Configuration()
        guard let key else {
            configure(&config)
            return try DatabaseQueue(path: path, configuration: config)
        }
        let uri = try CipherVFS.uri(for: path)
        config.prepareDatabase { db in
            try key.attach(db, path: path)
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            try db.execute(sql: "PRAGMA cache_size = -\(Connection.encryptedCacheKiB)")
        }
        configure(&config)
        if case .wal = config.journalMode {
            config.journalMode = .default
            if !config.readonly {
                config.prepareDatabase { db in
                    let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                    guard mode == "wal" else { throw DatabaseError(message: "could not activate WAL mode at path: \(path)") }
                }
            }
        }
        return try DatabaseQueue(path: uri, configuration: config)
    }
}

extension EncryptionKey {
    /// Binds the key to the new connection `db` on `path` (its first step, before any read).
    ///
    /// - Throws: `.invalidDatabase` for a wrong key, a plaintext file (as realm-swift: "Realm file decryption
    ///   failed") or a file that is not a realm; `.fileAccess` for a file that cannot be read.
    func attach(_ db: Database, path: String) throws {
        var args = atoll_cipher_attach_args(key: Unmanaged.passUnretained(self).toOpaque(), detail: 0, code: 0)
        let rc = withExtendedLifetime(self) {
            sqlite3_file_control(db.sqliteConnection, "main", ATOLL_CIPHER_FCNTL_ATTACH, &args)
        }
        guard rc != SQLITE_OK else { return }
        switch Int(args.detail) {
        case Int(ATOLL_CIPHER_WRONG_KEY):
            throw Realm.Error(.invalidDatabase, "Realm file decryption failed: the encryption key does not open '\(path)'", path: path)
        case Int(ATOLL_CIPHER_PLAINTEXT):
            throw Realm.Error(.invalidDatabase, "Realm file decryption failed: '\(path)' is not encrypted: open it without an encryption key (or write an encrypted copy with writeCopy(toFile:encryptionKey:))", path: path)
        case Int(ATOLL_CIPHER_UNSUPPORTED):
            throw Realm.Error(.invalidDatabase, "'\(path)' is encrypted in a format this version of Atoll does not know", path: path)
        case Int(ATOLL_CIPHER_EMPTY_READ_ONLY):
            throw Realm.Error(.fileAccess, "cannot open '\(path)' read-only: the file is empty", path: path)
        case Int(ATOLL_CIPHER_IO):
            throw Realm.Error(.fileAccess, "cannot read the header of '\(path)' (SQLite code \(args.code))", path: path)
        default:
            throw Realm.Error(.invalidDatabase, "'\(path)' is not a realm file", path: path)
        }
    }
}
