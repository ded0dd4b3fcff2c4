import AtollCore
import Foundation

extension AppConfig {
    /// Read and write rules for one object type (or all, when `type` is nil), in the query language with
    /// `%user.id` standing for the logged-in user (and `%user.custom_data.<field>`, `%user.data.email`).
    ///
    /// Several rules of one type are roles: a session takes, per type, the first rule whose
    /// ``when`` holds for its user. A type that has rules (or, without its own, the rule of every
    /// type) none of which applies to the user may not be read or written by that user.
    ///
    /// ```swift
    /// PermissionRule(type: "Task", role: "admin", when: "%user.custom_data.isAdmin == true")
    /// PermissionRule(type: "Task", role: "owner", read: "owner == %user.id", write: "owner == %user.id",
    ///                delete: false, fields: FieldAccess(fields: ["owner": .init(read: true, write: false)],
    ///                                                   otherFields: .init(read: true, write: true)))
    /// ```
    public struct PermissionRule: Sendable, Hashable, Codable {
        public var type: String?
        /// The role's name, for errors and logs.
        public var role: String?
        /// When the rule applies: a condition on the user alone (`%user.custom_data.role == 'admin'`),
        /// checked when a session binds; nil: always.
        public var when: String?
        public var read: String
        public var write: String
        /// Whether the user may create objects (that the write rule allows).
        public var insert: Bool
        /// Whether the user may delete objects (that the write rule allows).
        public var delete: Bool
        /// Field-level permissions: which fields of the objects the rules let the user read and
        /// write; nil: all of them. In partition-based sync the rule has no type: a field is
        /// named in every type.
        public var fields: FieldAccess?

        public init(type: String? = nil, read: String = "true", write: String = "true") {
            self.init(type: type, role: nil, when: nil, read: read, write: write)
        }

        public init(type: String? = nil, role: String?, when: String? = nil, read: String = "true", write: String = "true",
                    insert: Bool = true, delete: Bool = true, fields: FieldAccess? = nil) {
            self.type = type
            self.role = role
            self.when = when
            self.read = read
            self.write = write
            self.insert = insert
            self.delete = delete
            self.fields = fields
        }
    }
}

extension AppConfig.PermissionRule {
    enum CodingKeys: String, CodingKey {
        case type, role, when, read, write, insert, delete, fields
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            type: try container.decodeIfPresent(String.self, forKey: .type),
            role: try container.decodeIfPresent(String.self, forKey: .role),
            when: try container.decodeIfPresent(String.self, forKey: .when),
            read: try container.decodeIfPresent(String.self, forKey: .read) ?? "true",
            write: try container.decodeIfPresent(String.self, forKey: .write) ?? "true",
            insert: try container.decodeIfPresent(Bool.self, forKey: .insert) ?? true,
            delete: try container.decodeIfPresent(Bool.self, forKey: .delete) ?? true,
            fields: try container.decodeIfPresent(FieldAccess.self, forKey: .fields))
    }
}
