import AtollAppConfig
import AtollCore
import Foundation

/// Translates an App Services app export into an Atoll app: values in, values out.
///
/// Deny by default: a role, rule or setting that Atoll cannot express exactly is left out (so it
/// grants nothing) and named in the report; nothing grants more than the source did.
package enum AppImporter {
    /// The import plan of `export`. Throws only when the export has no app id or a file the
    /// translation needs is not JSON.
    package static func plan(_ export: AppExport) throws(AppImportError) -> ImportPlan {
        var context = ImportContext(export: export)
        try context.run()
        return ImportPlan(app: context.app, schema: context.schemaList, report: context.report)
    }
}

/// The state of one import while it runs.
struct ImportContext {
    let export: AppExport
    /// Every provider off and development mode off until the export says otherwise: never more
    /// than the source.
    var app = ImportedApp(id: "", authProviders: .none, developmentMode: false)
    var report = ImportReport()
    /// Files the import read (the others are reported as not carried over or unknown).
    var read: Set<String> = []
    /// Collections by `<service>/<database>/<collection>`.
    var collections: [String: Collection] = [:]
    var schemaList: [ObjectSchema] = []

    struct Collection {
        var service: String
        var database: String
        var name: String
        /// The Realm class name: the schema's `title`, else the collection's name.
        var className: String
        var schema: ObjectSchema?
        var folder: String
    }

    init(export: AppExport) { self.export = export }

    mutating func document(_ path: String) throws(AppImportError) -> ExportJSON? {
        guard let data = export.files[path] else { return nil }
        read.insert(path)
        guard let value = ExportJSON(parsing: data) else { throw AppImportError(.invalidJSON, "\(path) is not JSON") }
        return value
    }

    mutating func run() throws(AppImportError) {
        try readAppConfig()
        try readSchemas()
        readRemoteAccess()
        try readSync()
        try readRules()
        try readAuth()
        try readFunctions()
        reportTheRest()
    }

    // MARK: realm_config.json

    mutating func readAppConfig() throws(AppImportError) {
        let candidates = ["realm_config.json", "config.json"]
        guard let path = candidates.first(where: { export.files[$0] != nil }), let config = try document(path) else {
            throw AppImportError(.noAppID, "no realm_config.json (or config.json): is this the folder `appservices pull` wrote?")
        }
        guard let id = config["app_id"]?.string ?? config["client_app_id"]?.string, !id.isEmpty else {
            throw AppImportError(.noAppID, "\(path) has no app_id")
        }
        guard id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw AppImportError(.noAppID, "\(path)'s app_id \"\(id)\" is not a valid Atoll app id (letters, digits, '-', '_', '.')")
        }
        app.id = id
        report.add(.mapped, path, "app id \(id) (apps keep App(id: \"\(id)\"); only baseURL changes)")
        for (key, value) in config.entries ?? [] {
            switch key {
            case "app_id", "client_app_id", "config_version", "name": continue
            case "location", "deployment_model", "provider_region", "environment":
                report.add(.notCarried, "\(path) \(key)", "\(MongoExpression.describe(value)): where the Atoll server runs is yours to choose")
            default:
                report.add(.unknown, "\(path) \(key)", "not read")
            }
        }
    }

    // MARK: sync/config.json

    mutating func readSync() throws(AppImportError) {
        guard let sync = try document("sync/config.json") else {
            report.add(.mapped, "sync", "no sync/config.json: sync is off in the export; the app accepts either sync kind")
            return
        }
        let path = "sync/config.json"
        let kind = sync["type"]?.string ?? (sync["partition"] != nil ? "partition" : "flexible")
        switch kind {
        case "flexible":
            app.syncKind = .flexible
            report.add(.mapped, path, "flexible sync")
            readQueryableFields(sync, path: path)
            if let tables = sync["asymmetric_tables"]?.array {
                let names = tables.compactMap(\.string).map(className(ofCollection:))
                markAsymmetric(names)
                if !names.isEmpty {
                    report.add(.mapped, "\(path) asymmetric_tables", "\(names.joined(separator: ", ")): data ingest (declare them AsymmetricObject in the app, as before)")
                }
            }
            if let permissions = sync["permissions"] { try readLegacyPermissions(permissions, path: "\(path) permissions") }
        case "partition":
            app.syncKind = .partition
            try readPartition(sync["partition"], path: path)
        default:
            report.add(.refused, "\(path) type", "\"\(kind)\" is not a sync kind Atoll knows: the app accepts neither kind's rules")
        }
        if let state = sync["state"]?.string, state != "enabled" {
            report.add(.needsAttention, "\(path) state", "sync was \"\(state)\" in App Services; in Atoll it is on (`atoll sync terminate` turns it off)")
        }
        if let days = sync["client_max_offline_days"]?.number, days > 0 {
            app.maxOfflineTime = days * 86_400
            report.add(.mapped, "\(path) client_max_offline_days", "\(Int(days)) days → maxOfflineTime \(Int(days * 86_400)) s")
        }
        if let disabled = sync["is_recovery_mode_disabled"]?.bool {
            app.clientRecovery = !disabled
            report.add(.mapped, "\(path) is_recovery_mode_disabled", "clientRecovery \(!disabled)")
        }
        app.developmentMode = sync["development_mode_enabled"]?.bool ?? false
        report.add(.mapped, "\(path) development_mode_enabled", "developmentMode \(app.developmentMode)")
        for (key, _) in sync.entries ?? [] where !Self.knownSyncKeys.contains(key) {
            report.add(.unknown, "\(path) \(key)", "not read")
        }
    }

    static let knownSyncKeys: Set<String> = [
        "type", "state", "development_mode_enabled", "service_name", "database_name", "client_max_offline_days",
        "is_recovery_mode_disabled", "queryable_fields_names", "indexed_queryable_fields_names",
        "collection_queryable_fields_names", "asymmetric_tables", "permissions", "partition", "last_disabled",
    ]

    mutating func readQueryableFields(_ sync: ExportJSON, path: String) {
        var fields: [String] = []
        for key in ["queryable_fields_names", "indexed_queryable_fields_names"] {
            for name in sync[key]?.array?.compactMap(\.string) ?? [] where !fields.contains(name) { fields.append(name) }
        }
        for (collection, names) in sync["collection_queryable_fields_names"]?.entries ?? [] {
            let type = className(ofCollection: collection)
            for name in names.array?.compactMap(\.string) ?? [] { fields.append("\(type).\(name)") }
        }
        if fields.isEmpty {
            // Atoll's empty list lets queries use every field: never more than the source.
            fields = ["_id"]
            report.add(.mapped, "\(path) queryable fields", "none declared: queries may use _id only")
        } else {
            report.add(.mapped, "\(path) queryable fields", fields.joined(separator: ", "))
        }
        app.queryableFields = fields
    }

    mutating func readPartition(_ partition: ExportJSON?, path: String) throws(AppImportError) {
        guard let partition else {
            report.add(.refused, "\(path) partition", "partition-based sync without a partition key: no one may read or write")
            app.permissions = [ImportedApp.Rule(type: nil, role: nil, when: nil, read: "false", write: "false", insert: false, delete: false)]
            return
        }
        let key = partition["key"]?.string ?? "?"
        let type = partition["type"]?.string ?? "?"
        report.add(.mapped, "\(path) partition", "partition-based sync on \(key) (\(type)): clients keep user.configuration(partitionValue:)")
        let permissions = partition["permissions"]
        var rule = ImportedApp.Rule(type: nil, role: nil, when: nil, read: "false", write: "false", insert: true, delete: true)
        for side in ["read", "write"] {
            let subject = "\(path) partition.permissions.\(side)"
            guard let expression = permissions?[side] else {
                report.add(.refused, subject, "absent: no one may \(side)")
                continue
            }
            do {
                let predicate = try MongoExpression.translate(expression, partitionField: "partition")
                if side == "read" { rule.read = predicate.rule } else { rule.write = predicate.rule }
                report.add(.mapped, subject, predicate.rule)
            } catch {
                report.add(.refused, subject, "\(error.reason): no one may \(side)")
            }
        }
        app.permissions = [rule]
    }

    // MARK: What is left

    mutating func reportTheRest() {
        for path in export.files.keys.sorted() where !read.contains(path) {
            let top = path.split(separator: "/").first.map(String.init) ?? path
            switch top {
            case "functions":
                report.add(.notCarried, path, "not a function's source or configuration")
            case "values", "secrets.json":
                report.add(.notCarried, path, "values and secrets are not carried over: put what the app needs in the server's configuration")
            case "triggers", "http_endpoints", "graphql", "hosting", "log_forwarders", "services", "environments", "incoming_webhooks":
                report.add(.notCarried, path, "\(top): not part of Atoll")
            case "data_sources" where path.hasSuffix("/config.json"):
                report.add(.notCarried, path, "the data source's cluster: Atoll keeps the data itself (`atoll data import`)")
            default:
                report.add(.unknown, path, "not read")
            }
        }
    }

    /// The class name of a collection named in the sync configuration (its schema's title).
    func className(ofCollection name: String) -> String {
        collections.values.first { $0.name == name }?.className ?? name
    }

    mutating func markAsymmetric(_ names: [String]) {
        for i in schemaList.indices where names.contains(schemaList[i].name) { schemaList[i].isAsymmetric = true }
    }
}
