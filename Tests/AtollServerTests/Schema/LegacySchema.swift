import GRDB
@testable import AtollServer

/// The server's schema as the migrations written out by hand before the schema was declared once
/// (``ServerSchema``) wrote it, kept word for word: a database these make must open and migrate
/// as before, and a new one must come out the same (`ServerSchemaTests`).
enum LegacySchema {
    typealias Migration = PostgresMigrations.Migration

    static let all: [Migration] = [
        Migration(version: 1, name: "apps, users, identities, tokens, keys, realms, client files, history, e-mail accounts", statements: [
            """
            CREATE TABLE apps (
                id TEXT PRIMARY KEY,
                created_at DOUBLE PRECISION NOT NULL,
                sync_enabled BOOLEAN NOT NULL DEFAULT TRUE,
                client_recovery BOOLEAN,
                max_offline_time DOUBLE PRECISION
            )
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT,
                name TEXT,
                password_hash TEXT,
                disabled BOOLEAN NOT NULL DEFAULT FALSE,
                created_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX users_app ON users(app_id, created_at, id)",
            """
            CREATE TABLE identities (
                app_id TEXT NOT NULL,
                provider_type TEXT NOT NULL,
                identity_id TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                PRIMARY KEY (app_id, provider_type, identity_id)
            )
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
            """
            CREATE TABLE refresh_tokens (
                digest TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                revoked BOOLEAN NOT NULL DEFAULT FALSE
            )
            """,
            "CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id)",
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                name TEXT NOT NULL,
                digest TEXT NOT NULL,
                disabled BOOLEAN NOT NULL DEFAULT FALSE,
                created_at DOUBLE PRECISION NOT NULL,
                UNIQUE (app_id, digest)
            )
            """,
            "CREATE INDEX api_keys_user ON api_keys(user_id)",
            """
            CREATE TABLE realms (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                path TEXT NOT NULL,
                epoch BIGINT NOT NULL,
                epoch_reason SMALLINT NOT NULL DEFAULT 1,
                latest_version BIGINT NOT NULL DEFAULT 0,
                next_file_ident BIGINT NOT NULL DEFAULT 1,
                compacted_through BIGINT NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL,
                UNIQUE (app_id, path)
            )
            """,
            """
            CREATE TABLE client_files (
                realm_id BIGINT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                ident BIGINT NOT NULL,
                salt BIGINT NOT NULL,
                last_client_version BIGINT NOT NULL DEFAULT 0,
                compacted_client_version BIGINT NOT NULL DEFAULT 0,
                last_server_version BIGINT NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL,
                last_seen DOUBLE PRECISION,
                user_id TEXT,
                PRIMARY KEY (realm_id, ident)
            )
            """,
            "CREATE INDEX client_files_by_user ON client_files(user_id)",
            """
            CREATE TABLE history (
                realm_id BIGINT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                server_version BIGINT NOT NULL,
                origin_file_ident BIGINT NOT NULL,
                origin_client_version BIGINT NOT NULL,
                origin_timestamp BIGINT NOT NULL,
                changeset BYTEA NOT NULL,
                PRIMARY KEY (realm_id, server_version)
            )
            """,
            "CREATE INDEX history_origin ON history(realm_id, origin_file_ident, server_version)",
            """
            CREATE TABLE pending_users (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (app_id, email)
            )
            """,
            """
            CREATE TABLE account_tokens (
                seq BIGINT GENERATED ALWAYS AS IDENTITY,
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                purpose TEXT NOT NULL,
                digest TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX account_tokens_owner ON account_tokens(app_id, email, purpose, created_at)",
            "CREATE INDEX account_tokens_expiry ON account_tokens(expires_at)",
        ]),
        Migration(version: 2, name: "secrets the nodes share", statements: [
            "CREATE TABLE shared_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        ]),
        Migration(version: 3, name: "backups every node reads", statements: [
            """
            CREATE TABLE backups (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                body BYTEA NOT NULL
            )
            """,
            "CREATE INDEX backups_app ON backups(app_id, created_at, id)",
        ]),
        Migration(version: 4, name: "passwords per e-mail identity, the API key of a login, logins by device", statements: [
            // A user's password belonged to the user; it now belongs to its e-mail identity.
            "ALTER TABLE identities ADD COLUMN password_hash TEXT",
            """
            UPDATE identities SET password_hash = users.password_hash FROM users
            WHERE users.id = identities.user_id AND identities.provider_type = 'local-userpass'
            """,
            "UPDATE users SET password_hash = NULL",
            "ALTER TABLE refresh_tokens ADD COLUMN api_key_id TEXT",
            "CREATE INDEX refresh_tokens_api_key ON refresh_tokens(api_key_id) WHERE api_key_id IS NOT NULL",
            "CREATE INDEX refresh_tokens_device ON refresh_tokens(device_id)",
            "CREATE INDEX pending_users_created ON pending_users(app_id, created_at)",
        ]),
        // Realms made before are no one's: they count against no user's limit.
        Migration(version: 5, name: "the user who created each realm", statements: [
            "ALTER TABLE realms ADD COLUMN created_by TEXT",
            "CREATE INDEX realms_by_creator ON realms(app_id, created_by)",
        ]),
        Migration(version: 6, name: "dates in history as seconds since 2001", statements: [],
                  rewrite: { try await PostgresMigrations.reencodeHistoryDates($0, logger: $1) }),
        Migration(version: 7, name: "the custom JWT metadata fields of each user", statements: [
            "ALTER TABLE users ADD COLUMN metadata TEXT",
        ]),
    ]


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
        migrator.registerMigration("v9: dates in history as seconds since 2001") { try SQLiteServerStore.reencodeHistoryDates($0) }
        migrator.registerMigration("v10: the custom JWT metadata fields of each user") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN metadata TEXT")
        }
        return migrator
    }

    static func registerEmailAccountMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v6: pending e-mail registrations, confirmation and reset tokens") { db in
            try db.execute(
                sql: """
                    CREATE TABLE pending_users (
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        email TEXT NOT NULL,
                        password_hash TEXT NOT NULL,
                        created_at DOUBLE NOT NULL,
                        PRIMARY KEY (app_id, email)
                    );
                    CREATE TABLE account_tokens (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                        email TEXT NOT NULL,
                        purpose TEXT NOT NULL,
                        digest TEXT NOT NULL,
                        created_at DOUBLE NOT NULL,
                        expires_at DOUBLE NOT NULL
                    );
                    CREATE INDEX account_tokens_owner ON account_tokens(app_id, email, purpose, created_at);
                    """)
        }
    }
}
