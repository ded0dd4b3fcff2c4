import AtollCore

/// Roles → Atoll permission rules. Rules come in two generations: `rules.json` per collection and
/// `default_rule.json` per data source (roles with `apply_when`, `document_filters`,
/// `read`/`write`/`insert`/`delete`, `fields`, `additional_fields`), and the older sync-only
/// `permissions` of `sync/config.json` (`rules` per collection, `defaultRoles`, with `applyWhen`,
/// `read`, `write`). A role Atoll cannot express exactly is left out: no user gets it.
extension ImportContext {
    typealias Predicate = MongoExpression.Predicate

    mutating func readRules() throws(AppImportError) {
        var defaults: [ImportedApp.Rule] = []
        var typed: [ImportedApp.Rule] = []
        var sawRules = false
        for path in export.files.keys.sorted() {
            let parts = path.split(separator: "/").map(String.init)
            if parts.count == 3, parts[0] == "data_sources", parts[2] == "default_rule.json", let json = try document(path) {
                sawRules = true
                defaults += roles(json["roles"]?.array ?? [], type: nil, path: path)
            } else if parts.count == 5, parts[0] == "data_sources", parts[4] == "rules.json", let json = try document(path) {
                sawRules = true
                let key = parts[1...3].joined(separator: "/")
                let type = collections[key]?.className ?? parts[3]
                let rules = roles(json["roles"]?.array ?? [], type: type, path: path)
                typed += rules.isEmpty ? [Self.denying(type)] : rules
                for (name, _) in json.entries ?? [] where !["roles", "filters", "collection", "database", "_id"].contains(name) {
                    report.add(.unknown, "\(path) \(name)", "not read")
                }
                if let filters = json["filters"]?.array, !filters.isEmpty {
                    report.add(.refused, "\(path) filters", "query filters (\(filters.count)) do not apply to Device Sync and are not carried over")
                }
            }
        }
        guard sawRules else { return }
        if app.syncKind == .partition {
            if !typed.isEmpty || !defaults.isEmpty {
                report.add(.refused, "data_sources rules", "a partition-based app's access is its partition rules; the data source roles are not carried over")
            }
            return
        }
        if !app.permissions.isEmpty {
            report.add(.refused, "sync/config.json permissions", "the export also has data source rules, which replace the sync permissions: these are not carried over")
        }
        // A data source without default roles: types without rules of their own are denied.
        if defaults.isEmpty { defaults = [Self.denying(nil)] }
        app.permissions = typed + defaults
    }

    static func denying(_ type: String?) -> ImportedApp.Rule {
        ImportedApp.Rule(type: type, role: nil, when: nil, read: "false", write: "false", insert: false, delete: false)
    }

    /// The Atoll rules of `roles` for `type` (nil: every type without rules), in order.
    mutating func roles(_ roles: [ExportJSON], type: String?, path: String) -> [ImportedApp.Rule] {
        var out: [ImportedApp.Rule] = []
        for (index, role) in roles.enumerated() {
            let name = role["name"]?.string ?? "#\(index + 1)"
            let subject = "\(path) \(type ?? "default") role \"\(name)\""
            do {
                let rule = try self.role(role, name: name, type: type)
                out.append(rule)
                report.add(.mapped, subject, describe(rule))
            } catch {
                report.add(.refused, subject, "\(error.reason); users this role applied to get no access through it")
            }
        }
        return out
    }

    func role(_ role: ExportJSON, name: String, type: String?) throws(MongoExpression.Refusal) -> ImportedApp.Rule {
        for (key, _) in role.entries ?? [] where !Self.roleKeys.contains(key) {
            throw MongoExpression.Refusal("it has \(key), which Atoll does not know")
        }
        let when = try condition(role["apply_when"], what: "apply_when")
        let readFilter = try filter(role["document_filters"]?["read"], type: type, what: "document_filters.read")
        let writeFilter = try filter(role["document_filters"]?["write"], type: type, what: "document_filters.write")
        let read = try flag(role["read"], type: type, what: "read")
        let write = try flag(role["write"], type: type, what: "write")
        let insert = try constant(role["insert"], what: "insert")
        let delete = try constant(role["delete"], what: "delete")
        var access: FieldAccess?
        if role["fields"] != nil || role["additional_fields"] != nil {
            guard case .constant(let docRead) = read.kind, case .constant(let docWrite) = write.kind else {
                throw MongoExpression.Refusal("field permissions next to a conditional read or write are not expressible")
            }
            var fields: [String: FieldAccess.Access] = [:]
            for (field, spec) in role["fields"]?.entries ?? [] {
                guard MongoExpression.isFieldPath(field), !field.contains(".") else {
                    throw MongoExpression.Refusal("field permissions of \(field) (a nested path) are not expressible")
                }
                try checkField(field, type: type)
                fields[field] = try fieldAccess(spec, what: "fields.\(field)")
            }
            // Fields not listed: additional_fields, else the document-level permissions.
            let others = try role["additional_fields"].map { spec throws(MongoExpression.Refusal) in try fieldAccess(spec, what: "additional_fields") }
                ?? FieldAccess.Access(read: docRead || docWrite, write: docWrite)
            access = FieldAccess(fields: fields, otherFields: others)
        }
        let anyRead = access.map { a in a.otherFields.read || a.otherFields.write || a.fields.values.contains { $0.read || $0.write } } ?? false
        let anyWrite = access.map { a in a.otherFields.write || a.fields.values.contains { $0.write } } ?? false
        // What may be written may be read; a write also needs the read filter (never more than the source).
        let readQuery = Predicate.and([readFilter, .or([read, write, anyRead ? .yes : .no])])
        let writeQuery = Predicate.and([writeFilter, readFilter, .or([write, anyWrite ? .yes : .no])])
        return ImportedApp.Rule(
            type: type, role: name, when: when.kind == .constant(true) ? nil : when.rule, read: readQuery.rule, write: writeQuery.rule,
            insert: insert && writeQuery.kind != .constant(false), delete: delete && writeQuery.kind != .constant(false),
            fields: access)
    }

    static let roleKeys: Set<String> = [
        "name", "apply_when", "document_filters", "read", "write", "insert", "delete", "search", "fields", "additional_fields", "_id",
    ]

    /// A role's `apply_when`: a condition on the user alone (Device Sync picks a session's role
    /// when it starts, from its user).
    func condition(_ json: ExportJSON?, what: String) throws(MongoExpression.Refusal) -> Predicate {
        guard let json else { return .yes }
        let predicate = try MongoExpression.translate(json)
        guard !predicate.readsDocument else {
            throw MongoExpression.Refusal("\(what) reads document fields (\(predicate.fields.sorted().joined(separator: ", "))): "
                + "Device Sync chooses a session's role from its user alone")
        }
        return predicate
    }

    /// A document filter (absent: every document).
    func filter(_ json: ExportJSON?, type: String?, what: String) throws(MongoExpression.Refusal) -> Predicate {
        guard let json else { return .yes }
        let predicate: Predicate
        do { predicate = try MongoExpression.translate(json) } catch {
            throw MongoExpression.Refusal("\(what): \(error.reason)")
        }
        for field in predicate.fields { try checkField(field, type: type) }
        return predicate
    }

    /// A document-level `read`/`write`: a boolean or an expression (absent: false).
    func flag(_ json: ExportJSON?, type: String?, what: String) throws(MongoExpression.Refusal) -> Predicate {
        guard let json else { return .no }
        return try filter(json, type: type, what: what)
    }

    /// `insert`/`delete`: Atoll's are yes or no per role (absent: no).
    func constant(_ json: ExportJSON?, what: String) throws(MongoExpression.Refusal) -> Bool {
        guard let json else { return false }
        let predicate = try MongoExpression.translate(json)
        guard case .constant(let value) = predicate.kind else {
            throw MongoExpression.Refusal("\(what) is an expression (\(predicate.rule)); Atoll's \(what) is yes or no per role")
        }
        return value
    }

    func fieldAccess(_ spec: ExportJSON, what: String) throws(MongoExpression.Refusal) -> FieldAccess.Access {
        for (key, _) in spec.entries ?? [] where key != "read" && key != "write" {
            throw MongoExpression.Refusal("\(what).\(key) is not expressible")
        }
        let read = try constant(spec["read"], what: "\(what).read")
        let write = try constant(spec["write"], what: "\(what).write")
        return FieldAccess.Access(read: read || write, write: write)
    }

    /// Refuses a rule naming a field its type does not have (it would deny everything in Atoll
    /// while granting in the source, or the reverse).
    func checkField(_ path: String, type: String?) throws(MongoExpression.Refusal) {
        guard let type, let schema = schemaList.first(where: { $0.name == type }) else { return }
        let first = String(path.split(separator: ".").first ?? "")
        guard schema.properties.contains(where: { $0.name == first }) else {
            throw MongoExpression.Refusal("\(type) has no field \(first) in its schema")
        }
    }

    func describe(_ rule: ImportedApp.Rule) -> String {
        var parts = ["read: \(rule.read)", "write: \(rule.write)"]
        if let when = rule.when { parts.insert("when \(when)", at: 0) }
        parts.append("insert: \(rule.insert)")
        parts.append("delete: \(rule.delete)")
        if let fields = rule.fields {
            let listed = fields.fields.keys.sorted().map { name in
                let a = fields.fields[name]!
                return "\(name) \(a.write ? "rw" : a.read ? "r" : "-")"
            }
            let others = fields.otherFields.write ? "rw" : fields.otherFields.read ? "r" : "-"
            parts.append("fields: \((listed + ["others \(others)"]).joined(separator: ", "))")
        }
        return parts.joined(separator: "; ")
    }

    // MARK: sync/config.json permissions (the older, sync-only form)

    mutating func readLegacyPermissions(_ permissions: ExportJSON, path: String) throws(AppImportError) {
        var typed: [ImportedApp.Rule] = []
        for (collection, roles) in permissions["rules"]?.entries ?? [] {
            let type = className(ofCollection: collection)
            let rules = legacyRoles(roles.array ?? [], type: type, path: path)
            typed += rules.isEmpty ? [Self.denying(type)] : rules
        }
        var defaults = legacyRoles(permissions["defaultRoles"]?.array ?? [], type: nil, path: path)
        if defaults.isEmpty { defaults = [Self.denying(nil)] }
        app.permissions = typed + defaults
    }

    mutating func legacyRoles(_ roles: [ExportJSON], type: String?, path: String) -> [ImportedApp.Rule] {
        var out: [ImportedApp.Rule] = []
        for (index, role) in roles.enumerated() {
            let name = role["name"]?.string ?? "#\(index + 1)"
            let subject = "\(path) \(type ?? "default") role \"\(name)\""
            do throws(MongoExpression.Refusal) {
                for (key, _) in role.entries ?? [] where !["name", "applyWhen", "read", "write"].contains(key) {
                    throw MongoExpression.Refusal("it has \(key), which Atoll does not know")
                }
                let when = try condition(role["applyWhen"], what: "applyWhen")
                let read = try flag(role["read"], type: type, what: "read")
                let write = try flag(role["write"], type: type, what: "write")
                let rule = ImportedApp.Rule(
                    type: type, role: name, when: when.kind == .constant(true) ? nil : when.rule, read: read.rule,
                    write: Predicate.and([read, write]).rule, insert: write.kind != .constant(false), delete: write.kind != .constant(false),
                    fields: nil)
                out.append(rule)
                report.add(.mapped, subject, describe(rule))
            } catch {
                report.add(.refused, subject, "\(error.reason); users this role applied to get no access through it")
            }
        }
        return out
    }
}
