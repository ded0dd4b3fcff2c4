import Foundation

/// The admin API's request and response bodies (`/api/admin/v1`, docs/protocol.md §3), declared
/// once for both sides: the server's routes encode and decode them, `AdminClient` (the `atoll`
/// tool, tests) decodes and encodes the same types, so a renamed field cannot break one side
/// unseen. Dates travel as JSON's default `Date` encoding (seconds since 2001-01-01).
///
/// Only values: no I/O, no server types. The server makes them from its records in its own
/// extensions.
public enum AdminAPI {}

extension AdminAPI {
    /// An app the server knows (`GET apps`, `POST apps/:app`).
    public struct App: Codable, Sendable, Hashable {
        public var id: String
        public var syncEnabled: Bool
        public var createdAt: Date

        public init(id: String, syncEnabled: Bool, createdAt: Date) {
            self.id = id
            self.syncEnabled = syncEnabled
            self.createdAt = createdAt
        }
    }

    /// A user of an app (`GET apps/:app/users`).
    public struct User: Codable, Sendable, Hashable {
        public var id: String
        public var email: String?
        public var disabled: Bool
        /// The identity providers the user has logged in with (`local-userpass`, `anon-user` …).
        public var providers: [String]
        public var createdAt: Date

        public init(id: String, email: String?, disabled: Bool, providers: [String], createdAt: Date) {
            self.id = id
            self.email = email
            self.disabled = disabled
            self.providers = providers
            self.createdAt = createdAt
        }
    }

    /// A sync session open on the server (`GET apps/:app/sessions`).
    public struct Session: Codable, Sendable, Hashable {
        public var user: String
        /// The realm's path (`s:tasks`, `flx`).
        public var realm: String
        public var fileIdent: Int64
        public var connection: UInt64
        public var session: UInt64

        public init(user: String, realm: String, fileIdent: Int64, connection: UInt64, session: UInt64) {
            self.user = user
            self.realm = realm
            self.fileIdent = fileIdent
            self.connection = connection
            self.session = session
        }
    }

    /// The realms an operation touched (`restore`, breaking schema changes).
    public struct Realms: Codable, Sendable, Hashable {
        public var realms: [String]

        public init(realms: [String]) { self.realms = realms }
    }
}

// MARK: Operations that make clients reset

extension AdminAPI {
    /// `POST apps/:app/backups`: the realm to back up (`s:tasks`, `flx`); nil backs up every realm
    /// of the app.
    public struct BackupRequest: Codable, Sendable, Hashable {
        public var realm: String?

        public init(realm: String?) { self.realm = realm }
    }

    /// A backup of one realm or of a whole app, kept by the server.
    public struct Backup: Codable, Sendable, Hashable {
        public var id: String
        public var app: String
        /// The realm backed up, or nil for every realm of the app.
        public var realm: String?
        public var createdAt: Date
        /// The paths of the realms the backup holds.
        public var realms: [String]

        public init(id: String, app: String, realm: String?, createdAt: Date, realms: [String]) {
            self.id = id
            self.app = app
            self.realm = realm
            self.createdAt = createdAt
            self.realms = realms
        }
    }

    /// `PATCH apps/:app/settings`: what to change; an absent field stays as it is.
    public struct SettingsChange: Codable, Sendable, Hashable {
        public var clientRecovery: Bool?
        /// Seconds, 0 or more; 0 keeps all history.
        public var maxOfflineTime: Double?

        public init(clientRecovery: Bool? = nil, maxOfflineTime: Double? = nil) {
            self.clientRecovery = clientRecovery
            self.maxOfflineTime = maxOfflineTime
        }
    }

    /// An app's client recovery and maximum offline time: in effect, and what operators set.
    public struct Settings: Codable, Sendable, Hashable {
        /// What operators set (nil: the configuration decides).
        public struct Overrides: Codable, Sendable, Hashable {
            public var clientRecovery: Bool?
            public var maxOfflineTime: Double?

            public init(clientRecovery: Bool?, maxOfflineTime: Double?) {
                self.clientRecovery = clientRecovery
                self.maxOfflineTime = maxOfflineTime
            }
        }
        /// In effect: the operator's setting, else the configuration's.
        public var clientRecovery: Bool
        /// In effect, in seconds; nil when all history is kept.
        public var maxOfflineTime: Double?
        public var overrides: Overrides

        public init(clientRecovery: Bool, maxOfflineTime: Double?, overrides: Overrides) {
            self.clientRecovery = clientRecovery
            self.maxOfflineTime = maxOfflineTime
            self.overrides = overrides
        }
    }

    /// What compaction did to one realm (`POST apps/:app/compact`).
    public struct Compaction: Codable, Sendable, Hashable {
        public var realm: String
        public var compactedThrough: Int64
        public var removedEntries: Int

        public init(realm: String, compactedThrough: Int64, removedEntries: Int) {
            self.realm = realm
            self.compactedThrough = compactedThrough
            self.removedEntries = removedEntries
        }
    }

    /// `POST apps/:app/schema/remove-property` and `…/change-property-type`.
    public struct PropertyChange: Codable, Sendable, Hashable {
        /// The object type.
        public var type: String
        public var property: String
        /// The new type's name (`int`, `string` …); only when changing the type.
        public var newType: String?
        /// Whether the changed property is optional; nil keeps what it was.
        public var optional: Bool?

        public init(type: String, property: String, newType: String? = nil, optional: Bool? = nil) {
            self.type = type
            self.property = property
            self.newType = newType
            self.optional = optional
        }
    }
}

// MARK: Server API keys

extension AdminAPI {
    /// `POST apps/:app/api_keys`.
    public struct NewServerAPIKey: Codable, Sendable, Hashable {
        public var name: String

        public init(name: String) { self.name = name }
    }

    /// A server API key: `key` is the secret, only in the answer that made it; `userID` is the
    /// user it logs in as (`Credentials.serverAPIKey`). Field names as App Services wrote them.
    public struct ServerAPIKey: Codable, Sendable, Hashable {
        public var id: String
        public var name: String
        public var key: String?
        public var disabled: Bool
        public var userID: String?

        public init(id: String, name: String, key: String?, disabled: Bool, userID: String?) {
            self.id = id
            self.name = name
            self.key = key
            self.disabled = disabled
            self.userID = userID
        }

        enum CodingKeys: String, CodingKey {
            case id = "_id"
            case name, key, disabled
            case userID = "user_id"
        }
    }
}

// MARK: App configurations

extension AdminAPI {
    /// What `PUT apps/:app/configuration` did with a configuration.
    public struct AppConfigurationAnswer: Codable, Sendable, Hashable {
        public var app: String
        /// `created`, `unchanged` or `replaced`.
        public var status: String

        public init(app: String, status: String) {
            self.app = app
            self.status = status
        }
    }

    /// What `GET apps/:app/configuration` answers: the configuration as the server serves it,
    /// every secret as `"<secret>"`. The server fills `Configuration` with its app model; a client
    /// that only shows it can read it as ``JSON``.
    public struct AppConfiguration<Configuration: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        public var app: String
        /// `configurationFile` (read-only) or `runtime` (added through the admin API).
        public var origin: String
        /// Grows each time the app is installed or replaced.
        public var generation: UInt64
        public var configuration: Configuration

        public init(app: String, origin: String, generation: UInt64, configuration: Configuration) {
            self.app = app
            self.origin = origin
            self.generation = generation
            self.configuration = configuration
        }
    }

    /// An error answer: `{"error": "…", "error_code": "…"}`.
    public struct ErrorAnswer: Codable, Sendable, Hashable {
        public var error: String
        public var errorCode: String?

        public init(error: String, errorCode: String?) {
            self.error = error
            self.errorCode = errorCode
        }

        enum CodingKeys: String, CodingKey {
            case error
            case errorCode = "error_code"
        }
    }
}

// MARK: Any JSON

extension AdminAPI {
    /// A JSON value read without a model: what a client shows or passes on of what the server
    /// sent (an app's configuration), and on the server (as `JSONValue`) a reset function's
    /// arguments and a user's custom data. Integers stay exact, objects keep their keys.
    public indirect enum JSON: Codable, Sendable, Hashable {
        case null
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case array([JSON])
        case object([String: JSON])

        public init(from decoder: any Decoder) throws {
            if var array = try? decoder.unkeyedContainer() {
                var values: [JSON] = []
                while !array.isAtEnd { values.append(try array.decode(JSON.self)) }
                self = .array(values)
            } else if let object = try? decoder.container(keyedBy: Key.self) {
                var values: [String: JSON] = [:]
                for key in object.allKeys { values[key.stringValue] = try object.decode(JSON.self, forKey: key) }
                self = .object(values)
            } else {
                let value = try decoder.singleValueContainer()
                if value.decodeNil() {
                    self = .null
                } else if let bool = try? value.decode(Bool.self) {
                    self = .bool(bool)
                } else if let integer = try? value.decode(Int64.self) {
                    self = .int(integer)
                } else if let number = try? value.decode(Double.self) {
                    self = .double(number)
                } else {
                    self = .string(try value.decode(String.self))
                }
            }
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .null:
                var value = encoder.singleValueContainer()
                try value.encodeNil()
            case .bool(let bool):
                var value = encoder.singleValueContainer()
                try value.encode(bool)
            case .int(let integer):
                var value = encoder.singleValueContainer()
                try value.encode(integer)
            case .double(let number):
                var value = encoder.singleValueContainer()
                try value.encode(number)
            case .string(let string):
                var value = encoder.singleValueContainer()
                try value.encode(string)
            case .array(let values):
                var array = encoder.unkeyedContainer()
                for element in values { try array.encode(element) }
            case .object(let values):
                var object = encoder.container(keyedBy: Key.self)
                for (key, element) in values { try object.encode(element, forKey: Key(key)) }
            }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}

// MARK: Data import and export

extension AdminAPI {
    /// What the server did with one batch of `POST apps/:app/data/import`.
    public struct ImportBatchResult: Codable, Sendable, Hashable {
        /// A document not imported, by its index in the batch.
        public struct Refusal: Codable, Sendable, Hashable {
            public var index: Int
            public var code: String
            /// Where in the document (`tags.2`, `_id`).
            public var path: String
            public var message: String

            public init(index: Int, code: String, path: String, message: String) {
                self.index = index
                self.code = code
                self.path = path
                self.message = message
            }
        }

        /// A link to an object no realm of the app holds (set to null), by the document's index.
        public struct Link: Codable, Sendable, Hashable {
            public var index: Int
            public var type: String
            /// The target's primary key, as canonical Extended JSON.
            public var id: String

            public init(index: Int, type: String, id: String) {
                self.index = index
                self.type = type
                self.id = id
            }
        }

        public var imported: Int
        public var refused: [Refusal]
        public var unresolvedLinks: [Link]
        /// Fields the schema does not have, by name, with how many documents had them.
        public var ignoredFields: [String: Int]
        /// The realms the batch wrote to.
        public var realms: [String]

        public init(imported: Int, refused: [Refusal], unresolvedLinks: [Link], ignoredFields: [String: Int], realms: [String]) {
            self.imported = imported
            self.refused = refused
            self.unresolvedLinks = unresolvedLinks
            self.ignoredFields = ignoredFields
            self.realms = realms
        }
    }

    /// One page of `GET apps/:app/data/export`: canonical Extended JSON documents, the cursor of
    /// the next page (nil: the last), and the realm's schema (the server's object schemas; a
    /// client that passes it on reads it as ``JSON``).
    public struct ExportPage<Schema: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        public var documents: [String]
        public var next: Int?
        public var schema: Schema

        public init(documents: [String], next: Int?, schema: Schema) {
            self.documents = documents
            self.next = next
            self.schema = schema
        }
    }
}
