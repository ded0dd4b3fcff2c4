import AtollAppConfig
import Foundation

extension ImportPlan {
    /// Adds the operator's settings to the imported app: `settings` is a JSON object whose members
    /// are merged into the app's configuration (objects member by member, anything else replaced),
    /// e.g. the keys an export never holds:
    ///
    /// ```json
    /// {"customJWT": {"algorithm": "HS256", "key": "…"}, "emailPassword": {"deliveryURL": "https://…"}}
    /// ```
    /// - Throws: `AppImportError(.invalidJSON)` when `settings` is not a JSON object, changes the
    ///   app id, or gives a setting the wrong shape.
    package mutating func merge(settings: Data) throws(AppImportError) {
        guard let overlay = (try? JSONSerialization.jsonObject(with: settings)) as? [String: Any] else {
            throw AppImportError(.invalidJSON, "the settings are not a JSON object")
        }
        if let id = overlay["id"], id as? String != app.id {
            throw AppImportError(.invalidJSON, "the settings may not change the app id (\(app.id))")
        }
        do {
            guard let base = try JSONSerialization.jsonObject(with: app.json()) as? [String: Any] else {
                throw AppImportError(.invalidJSON, "the app's configuration is not a JSON object")
            }
            let merged = try JSONSerialization.data(withJSONObject: Self.merge(overlay, into: base))
            app = try JSONDecoder().decode(AppConfig.App.self, from: merged)
        } catch let error as AppImportError {
            throw error
        } catch let error as DecodingError {
            throw AppImportError(.invalidJSON, "the settings do not fit an app's configuration: \(Self.describe(error))")
        } catch {
            throw AppImportError(.invalidJSON, "the settings cannot be merged into the app's configuration")
        }
        report.add(.mapped, "settings", "added: \(overlay.keys.sorted().joined(separator: ", "))")
    }

    static func merge(_ overlay: [String: Any], into base: [String: Any]) -> [String: Any] {
        var out = base
        for (key, value) in overlay {
            if let object = value as? [String: Any], let existing = base[key] as? [String: Any] {
                out[key] = merge(object, into: existing)
            } else {
                out[key] = value
            }
        }
        return out
    }

    /// Where a decoding error is, without the values (they may be secrets).
    static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): context = c
        @unknown default: return "malformed"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "malformed" : "at \(path.dropFirst())"
    }
}
