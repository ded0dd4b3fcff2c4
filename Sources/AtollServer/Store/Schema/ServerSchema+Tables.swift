/// What the server stores, both stores together. A table, column or index one store lacks has a
/// nil step there; one declared twice under one name (`users_app`) is declared each store's way.
extension ServerSchema {
    /// SQLite's migrations, by GRDB identifier.
    static let sqliteSteps: [Step] = [
        Step(number: 1, name: "v1: apps, users, identities, refresh tokens, API keys"),
        Step(number: 2, name: "v2: sync realms, client files, history"),
        Step(number: 3, name: "v3: sync on or off per app"),
        Step(number: 4, name: "v4: runtime settings, epoch reasons, client files last seen, compaction"),
        Step(number: 5, name: "v5: the user each client file was registered for"),
        Step(number: 6, name: "v6: pending e-mail registrations, confirmation and reset tokens"),
        // A user's password belonged to the user; it now belongs to its e-mail identity. (A user
        // that linked a second address before this kept one password for both: both keep it.)
        Step(number: 7, name: "v7: passwords per e-mail identity, the API key of a login, logins by device", data: [
            """
            UPDATE identities SET password_hash = (SELECT password_hash FROM users WHERE users.id = identities.user_id)
                WHERE provider_type = 'local-userpass'
            """,
            "UPDATE users SET password_hash = NULL",
        ]),
        // Realms made before are no one's: they count against no user's limit.
        Step(number: 8, name: "v8: the user who created each realm"),
        Step(number: 9, name: "v9: dates in history as seconds since 2001"),
        Step(number: 10, name: "v10: the custom JWT metadata fields of each user"),
        Step(number: 11, name: "v11: the apps added while the server runs"),
    ]

    /// PostgreSQL's migrations, by version.
    static let postgresSteps: [Step] = [
        Step(number: 1, name: "apps, users, identities, tokens, keys, realms, client files, history, e-mail accounts"),
        Step(number: 2, name: "secrets the nodes share"),
        Step(number: 3, name: "backups every node reads"),
        // A user's password belonged to the user; it now belongs to its e-mail identity.
        Step(number: 4, name: "passwords per e-mail identity, the API key of a login, logins by device", data: [
            """
            UPDATE identities SET password_hash = users.password_hash FROM users
            WHERE users.id = identities.user_id AND identities.provider_type = 'local-userpass'
            """,
            "UPDATE users SET password_hash = NULL",
        ]),
        // Realms made before are no one's: they count against no user's limit.
        Step(number: 5, name: "the user who created each realm"),
        Step(number: 6, name: "dates in history as seconds since 2001"),
        Step(number: 7, name: "the custom JWT metadata fields of each user"),
        Step(number: 8, name: "the apps added while the server runs"),
    ]

    static let tables: [Table] = [
        Table(name: "apps", since: .both(1), columns: [
            Column(name: "id", type: .text),
            Column(name: "created_at", type: .double),
            Column(name: "sync_enabled", type: .bool, defaultValue: .bool(true), since: Since(sqlite: 3, postgres: 1)),
            Column(name: "client_recovery", type: .bool, nullable: true, since: Since(sqlite: 4, postgres: 1)),
            Column(name: "max_offline_time", type: .double, nullable: true, since: Since(sqlite: 4, postgres: 1)),
        ], primaryKey: ["id"]),
        Table(name: "users", since: .both(1), columns: [
            Column(name: "id", type: .text),
            Column(name: "app_id", type: .text, references: "apps(id)"),
            Column(name: "email", type: .text, nullable: true),
            Column(name: "name", type: .text, nullable: true),
            // Unused since SQLite 7 / PostgreSQL 4 (passwords moved to identities).
            Column(name: "password_hash", type: .text, nullable: true),
            Column(name: "disabled", type: .bool, defaultValue: .bool(false)),
            Column(name: "created_at", type: .double),
            Column(name: "metadata", type: .text, nullable: true, since: Since(sqlite: 10, postgres: 7)),
        ], primaryKey: ["id"], indexes: [
            // PostgreSQL's pages users by creation; SQLite's was made before that and kept.
            Index(name: "users_app", columns: ["app_id"], since: .sqlite(1)),
            Index(name: "users_app", columns: ["app_id", "created_at", "id"], since: .postgres(1)),
        ]),
        Table(name: "identities", since: .both(1), columns: [
            Column(name: "app_id", type: .text),
            Column(name: "provider_type", type: .text),
            Column(name: "identity_id", type: .text),
            Column(name: "user_id", type: .text, references: "users(id)"),
            Column(name: "position", type: .int32),
            Column(name: "password_hash", type: .text, nullable: true, since: Since(sqlite: 7, postgres: 4)),
        ], primaryKey: ["app_id", "provider_type", "identity_id"], indexes: [
            Index(name: "identities_user", columns: ["user_id"], since: .both(1)),
        ]),
        Table(name: "refresh_tokens", since: .both(1), columns: [
            Column(name: "digest", type: .text),
            Column(name: "user_id", type: .text, references: "users(id)"),
            Column(name: "app_id", type: .text),
            Column(name: "device_id", type: .text),
            Column(name: "created_at", type: .double),
            Column(name: "expires_at", type: .double),
            Column(name: "revoked", type: .bool, defaultValue: .bool(false)),
            Column(name: "api_key_id", type: .text, nullable: true, since: Since(sqlite: 7, postgres: 4)),
        ], primaryKey: ["digest"], indexes: [
            Index(name: "refresh_tokens_user", columns: ["user_id"], since: .both(1)),
            Index(name: "refresh_tokens_api_key", columns: ["api_key_id"], condition: "api_key_id IS NOT NULL", since: Since(sqlite: 7, postgres: 4)),
            Index(name: "refresh_tokens_device", columns: ["device_id"], since: Since(sqlite: 7, postgres: 4)),
        ]),
        Table(name: "api_keys", since: .both(1), columns: [
            Column(name: "id", type: .text),
            Column(name: "user_id", type: .text, references: "users(id)"),
            Column(name: "app_id", type: .text),
            Column(name: "name", type: .text),
            Column(name: "digest", type: .text),
            Column(name: "disabled", type: .bool, defaultValue: .bool(false)),
            Column(name: "created_at", type: .double),
        ], primaryKey: ["id"], unique: [["app_id", "digest"]], indexes: [
            Index(name: "api_keys_user", columns: ["user_id"], since: .both(1)),
        ]),
        Table(name: "realms", since: Since(sqlite: 2, postgres: 1), columns: [
            Column(name: "id", type: .int64, identity: true),
            Column(name: "app_id", type: .text, references: "apps(id)"),
            Column(name: "path", type: .text),
            Column(name: "epoch", type: .int64),
            Column(name: "epoch_reason", type: .int16, defaultValue: .int(1), since: Since(sqlite: 4, postgres: 1)),
            Column(name: "latest_version", type: .int64, defaultValue: .int(0)),
            Column(name: "next_file_ident", type: .int64, defaultValue: .int(1)),
            Column(name: "compacted_through", type: .int64, defaultValue: .int(0), since: Since(sqlite: 4, postgres: 1)),
            Column(name: "created_at", type: .double),
            // Realms made before are no one's: they count against no user's limit.
            Column(name: "created_by", type: .text, nullable: true, since: Since(sqlite: 8, postgres: 5)),
        ], primaryKey: ["id"], unique: [["app_id", "path"]], indexes: [
            Index(name: "realms_by_creator", columns: ["app_id", "created_by"], since: Since(sqlite: 8, postgres: 5)),
        ]),
        Table(name: "client_files", since: Since(sqlite: 2, postgres: 1), columns: [
            Column(name: "realm_id", type: .int64, references: "realms(id)"),
            Column(name: "ident", type: .int64),
            Column(name: "salt", type: .int64),
            Column(name: "last_client_version", type: .int64, defaultValue: .int(0)),
            Column(name: "compacted_client_version", type: .int64, defaultValue: .int(0), since: Since(sqlite: 4, postgres: 1)),
            Column(name: "last_server_version", type: .int64, defaultValue: .int(0), since: Since(sqlite: 4, postgres: 1)),
            Column(name: "created_at", type: .double),
            Column(name: "last_seen", type: .double, nullable: true, since: Since(sqlite: 4, postgres: 1)),
            Column(name: "user_id", type: .text, nullable: true, since: Since(sqlite: 5, postgres: 1)),
        ], primaryKey: ["realm_id", "ident"], indexes: [
            Index(name: "client_files_by_user", columns: ["user_id"], since: Since(sqlite: 5, postgres: 1)),
        ], sqliteColumnOrder: [
            "realm_id", "ident", "salt", "last_client_version", "created_at",
            "last_seen", "last_server_version", "compacted_client_version", "user_id",
        ]),
        Table(name: "history", since: Since(sqlite: 2, postgres: 1), columns: [
            Column(name: "realm_id", type: .int64, references: "realms(id)"),
            Column(name: "server_version", type: .int64),
            Column(name: "origin_file_ident", type: .int64),
            Column(name: "origin_client_version", type: .int64),
            Column(name: "origin_timestamp", type: .int64),
            Column(name: "changeset", type: .bytes),
        ], primaryKey: ["realm_id", "server_version"], indexes: [
            Index(name: "history_origin", columns: ["realm_id", "origin_file_ident", "server_version"], since: Since(sqlite: 2, postgres: 1)),
        ], withoutRowID: true),
        Table(name: "pending_users", since: Since(sqlite: 6, postgres: 1), columns: [
            Column(name: "app_id", type: .text, references: "apps(id)"),
            Column(name: "email", type: .text),
            Column(name: "password_hash", type: .text),
            Column(name: "created_at", type: .double),
        ], primaryKey: ["app_id", "email"], indexes: [
            Index(name: "pending_users_created", columns: ["app_id", "created_at"], since: Since(sqlite: 7, postgres: 4)),
        ]),
        Table(name: "account_tokens", since: Since(sqlite: 6, postgres: 1), columns: [
            // PostgreSQL numbers tokens in creation order; SQLite's rowid does it.
            Column(name: "seq", type: .int64, identity: true, since: .postgres(1)),
            Column(name: "id", type: .text),
            Column(name: "app_id", type: .text, references: "apps(id)"),
            Column(name: "email", type: .text),
            Column(name: "purpose", type: .text),
            Column(name: "digest", type: .text),
            Column(name: "created_at", type: .double),
            Column(name: "expires_at", type: .double),
        ], primaryKey: ["id"], indexes: [
            Index(name: "account_tokens_owner", columns: ["app_id", "email", "purpose", "created_at"], since: Since(sqlite: 6, postgres: 1)),
            Index(name: "account_tokens_expiry", columns: ["expires_at"], since: .postgres(1)),
        ]),
        // Several nodes share their token secret and admin key here; one SQLite node keeps them in files.
        Table(name: "shared_secrets", since: .postgres(2), columns: [
            Column(name: "name", type: .text),
            Column(name: "value", type: .text),
            Column(name: "created_at", type: .timestamp, defaultValue: .now),
        ], primaryKey: ["name"]),
        // Every node reads the backups; one SQLite node keeps them in files.
        Table(name: "backups", since: .postgres(3), columns: [
            Column(name: "id", type: .text),
            Column(name: "app_id", type: .text),
            Column(name: "created_at", type: .double),
            Column(name: "body", type: .bytes),
        ], primaryKey: ["id"], indexes: [
            Index(name: "backups_app", columns: ["app_id", "created_at", "id"], since: .postgres(3)),
        ]),
        // The configurations of the apps added while the server runs (they hold the operator's
        // secrets: who may read this table is said in docs/server.md). No reference to `apps`:
        // a configuration is kept before its app's row is made, and outlives it.
        Table(name: "runtime_apps", since: Since(sqlite: 11, postgres: 8), columns: [
            Column(name: "id", type: .text),
            Column(name: "configuration", type: .text),
            Column(name: "updated_at", type: .double),
        ], primaryKey: ["id"]),
    ]
}
