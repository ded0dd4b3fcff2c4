import AtollAppConfig

/// `functions/config.json` (or the older `functions/<name>/config.json`) → the app's function
/// slots: each function keeps its name, `private`, `run_as_system` and `can_evaluate` (as a
/// condition on the user), with no webhook yet. Atoll runs no JavaScript: each source is listed
/// as needing a port, and the function answers `FunctionInvalid` until its URL is set.
extension ImportContext {
    mutating func readFunctions() throws(AppImportError) {
        var entries: [(spec: ExportJSON, path: String, source: String?)] = []
        if let list = try document("functions/config.json") {
            for spec in list.array ?? [] {
                let name = spec["name"]?.string ?? "?"
                let source = ["functions/\(name).js", "functions/\(name)/index.js"].first { export.files[$0] != nil }
                entries.append((spec, "functions/config.json", source))
            }
        }
        // The older layout: a folder per function with its config.json and source.js.
        for path in export.files.keys.sorted() where path.hasPrefix("functions/") && path.hasSuffix("/config.json") {
            let folder = String(path.dropLast("config.json".count))
            if let spec = try document(path) { entries.append((spec, path, export.files[folder + "source.js"] != nil ? folder + "source.js" : nil)) }
        }
        var functions = AppConfig.Functions()
        for (spec, path, source) in entries {
            guard let name = spec["name"]?.string, !name.isEmpty else {
                report.add(.refused, path, "a function without a name is left out")
                continue
            }
            var function = AppConfig.Functions.Function(url: nil, isPrivate: spec["private"]?.bool ?? false, runAsSystem: spec["run_as_system"]?.bool ?? false)
            let subject = "function \(name)"
            if let canEvaluate = spec["can_evaluate"], canEvaluate.entries?.isEmpty != true {
                do {
                    let condition = try condition(canEvaluate, what: "can_evaluate")
                    if condition.kind != .constant(true) { function.canEvaluate = condition.rule }
                    report.add(.mapped, "\(subject) can_evaluate", "callable when \(condition.rule)")
                } catch {
                    // Deny by default: no one may call it until the operator writes a condition.
                    function.canEvaluate = "false"
                    report.add(.refused, "\(subject) can_evaluate", "\(error.reason); callable by no one until functions.definitions.\(name).canEvaluate says who")
                }
            }
            functions.definitions[name] = function
            let role = function.isPrivate ? "private: not callable by clients" : "callable by clients"
            let system = function.runAsSystem ? ", ran as system" : ""
            if let source {
                read.insert(source)
                report.add(.needsAttention, source, "needs a port: \(subject) (\(role)\(system)); serve it as a webhook and set functions.definitions.\(name).url")
            } else {
                report.add(.needsAttention, subject, "needs a port (\(role)\(system)), its source is not in the export; set functions.definitions.\(name).url")
            }
        }
        if !functions.definitions.isEmpty { app.functions.definitions = functions.definitions }
    }
}
