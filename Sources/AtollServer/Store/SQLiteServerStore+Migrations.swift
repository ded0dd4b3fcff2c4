import GRDB

extension SQLiteServerStore {
    /// The store's schema, one migration per change. Never edit a shipped migration: add one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps, users, identities, refresh tokens, API keys") { db in
            try db.execute(
                sql: """
                    CREATE TABLE apps (
                        id TEXT PRIMARY KEY NOT NULL,
                        created_at DOUBLE NOT NULL
                    );
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        email TEXT,
                        name TEXT,
                        password_hash TEXT,
                        disabled BOOLEAN NOT NULL DEFAULT 0,
                        created_at DOUBLE NOT NULL
                    );
                    CREATE INDEX users_app ON users(app_id);
                    CREATE TABLE identities (
                        app_id TEXT NOT NULL,
                        provider_type TEXT NOT NULL,
                        identity_id TEXT NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        PRIMARY KEY (app_id, provider_type, identity_id)
                    );
                    CREATE INDEX identities_user ON identities(user_id);
                    CREATE TABLE refresh_tokens (
                        digest TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        app_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        created_at DOUBLE NOT NULL,
                        expires_at DOUBLE NOT NULL,
                        revoked BOOLEAN NOT NULL DEFAULT 0
                    );
                    CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);
                    CREATE TABLE api_keys (
                        id TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        app_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        digest TEXT NOT NULL,
                        disabled BOOLEAN NOT NULL DEFAULT 0,
                        created_at DOUBLE NOT NULL,
                        UNIQUE (app_id, digest)
                    );
                    CREATE INDEX api_keys_user ON api_keys(user_id);
                    """)
        }
        migrator.registerMigration("v2: sync realms, client files, history") { db in
            try db.execute(
                sql: """
                    CREATE TABLE realms (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        path TEXT NOT NULL,
                        epoch INTEGER NOT NULL,
                        latest_version INTEGER NOT NULL DEFAULT 0,
                        next_file_ident INTEGER NOT NULL DEFAULT 1,
                        created_at DOUBLE NOT NULL,
                        UNIQUE (app_id, path)
                    );
                    CREATE TABLE client_files (
                        realm_id INTEGER NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                        ident INTEGER NOT NULL,
                        salt INTEGER NOT NULL,
                        last_client_version INTEGER NOT NULL DEFAULT 0,
                        created_at DOUBLE NOT NULL,
                        PRIMARY KEY (realm_id, ident)
                    );
                    CREATE TABLE history (
                        realm_id INTEGER NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                        server_version INTEGER NOT NULL,
                        origin_file_ident INTEGER NOT NULL,
                        origin_client_version INTEGER NOT NULL,
                        origin_timestamp INTEGER NOT NULL,
                        changeset BLOB NOT NULL,
                        PRIMARY KEY (realm_id, server_version)
                    ) WITHOUT ROWID;
                    CREATE INDEX history_origin ON history(realm_id, origin_file_ident, server_version);
                    """)
        }
        migrator.registerMigration("v3: sync on or off per app") { db in
            try db.execute(sql: "ALTER TABLE apps ADD COLUMN sync_enabled BOOLEAN NOT NULL DEFAULT 1")
        }
        migrator.registerMigration("v4: runtime settings, epoch reasons, client files last seen, compaction") { db in
            try db.execute(
                sql: """
                    ALTER TABLE apps ADD COLUMN client_recovery BOOLEAN;
                    ALTER TABLE apps ADD COLUMN max_offline_time DOUBLE;
                    ALTER TABLE realms ADD COLUMN epoch_reason INTEGER NOT NULL DEFAULT 1;
                    ALTER TABLE realms ADD COLUMN compacted_through INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE client_files ADD COLUMN last_seen DOUBLE;
                    ALTER TABLE client_files ADD COLUMN last_server_version INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE client_files ADD COLUMN compacted_client_version INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v5: the user each client file was registered for") { db in
            try db.execute(sql: """
                    ALTER TABLE client_files ADD COLUMN user_id TEXT;
                    CREATE INDEX client_files_by_user ON client_files(user_id);
                    """)
        }
        registerEmailAccountMigration(&migrator)
        migrator.registerMigration("v7: passwords per e-mail identity, the API key of a login, logins by device") { db in
            // A user's password belonged to the user; it now belongs to its e-mail identity. (A user
            // that linked a second address before this kept one password for both: both keep it.)
            try db.execute(
                sql: """
                    ALTER TABLE identities ADD COLUMN password_hash TEXT;
                    UPDATE identities SET password_hash = (SELECT password_hash FROM users WHERE users.id = identities.user_id)
                        WHERE provider_type = 'local-userpass';
                    UPDATE users SET password_hash = NULL;
                    ALTER TABLE refresh_tokens ADD COLUMN api_key_id TEXT;
                    CREATE INDEX refresh_tokens_api_key ON refresh_tokens(api_key_id) WHERE api_key_id IS NOT NULL;
                    CREATE INDEX refresh_tokens_device ON refresh_tokens(device_id);
                    CREATE INDEX pending_users_created ON pending_users(app_id, created_at);
                    """)
        }
        migrator.registerMigration("v8: the user who created each realm") { db in
            // Realms made before are no one's: they count against no user's limit.
            try db.execute(sql: """
                    ALTER TABLE realms ADD COLUMN created_by TEXT;
                    CREATE INDEX realms_by_creator ON realms(app_id, created_by);
                    """)
        }
        registerDateMigration(&migrator)
        migrator.registerMigration("v10: the custom JWT metadata fields of each user") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN metadata TEXT")
        }
        return migrator
    }
}

extension SQLiteServerStore {
    /// Tests only: makes the database at `path` as a server of migration `migration` left it,
    /// with `rows` (SQL) written by that server, so a test can open it with this one.
    static func prepareForTesting(path: String, upTo migration: String, rows: String) throws {
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue, upTo: migration)
        try queue.write { try $0.execute(sql: rows) }
        try queue.close()
    }
}
