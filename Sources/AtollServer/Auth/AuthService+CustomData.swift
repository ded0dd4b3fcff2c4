import AtollCore
import Foundation

/// Reads the object holding a user's custom data from an app's synced data: the fields of the
/// object of `settings.type` whose `settings.userIdField` is `userID`, or nil when there is none.
package typealias CustomUserDataReader = @Sendable (
    _ appID: String, _ settings: ServerConfiguration.CustomUserData, _ userID: String
) async throws -> [String: Value]?

/// Custom user data (App Services' "custom user data"): an object of the app's synced data, read
/// when an access token is issued (login, refresh) and carried in it as `user_data`.
extension AuthService {
    /// A new access token for `user` on `deviceID`, with the user's custom data in it.
    func issueAccessToken(for user: StoredUser, deviceID: String, apiKeyID: String? = nil, now: Date) async throws -> String {
        try await accessTokens.issue(userID: user.id, appID: user.appID, deviceID: deviceID, now: now,
                                     userData: await customUserData(for: user), apiKeyID: apiKeyID)
    }

    /// The user's custom data as extended JSON, or nil: no `customUserData` for the app, no object
    /// for the user, the data could not be read (logged), or the document is larger than the
    /// configured `maxBytes` (left out whole, logged: a token never carries part of a document).
    package func customUserData(for user: StoredUser) async -> [String: JSONValue]? {
        guard let settings = apps.settings(forApp: user.appID).customUserData else { return nil }
        let fields: [String: Value]?
        do {
            fields = try await readCustomUserData(user.appID, settings, user.id)
        } catch {
            logger.warning("custom user data not read", metadata: ["app": "\(user.appID)", "user": "\(user.id)", "error": "\(error)"])
            return nil
        }
        guard let fields else { return nil }
        let document = fields.mapValues(Self.extendedJSON)
        let size = (try? JSONBody.encoder.encode(document).count) ?? Int.max
        guard size <= settings.maxBytes else {
            logger.warning("custom user data left out of the token: larger than maxBytes",
                           metadata: ["app": "\(user.appID)", "user": "\(user.id)", "bytes": "\(size)", "maxBytes": "\(settings.maxBytes)"])
            return nil
        }
        return document
    }

    /// A value as MongoDB's relaxed extended JSON, which the SDK reads back into `AnyBSON`.
    static func extendedJSON(_ value: Value) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .double(let d): d.isFinite ? .double(d) : .object(["$numberDouble": .string(d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity")])
        case .float(let f): extendedJSON(.double(Double(f)))
        case .string(let s): .string(s)
        case .data(let d): .object(["$binary": .object(["base64": .string(d.base64EncodedString()), "subType": .string("00")])])
        case .date(let d): .object(["$date": .object(["$numberLong": .string(String(Int64((d.timeIntervalSince1970 * 1000).rounded(.down))))])])
        case .objectId(let o): .object(["$oid": .string(o.stringValue)])
        case .uuid(let u): .object(["$uuid": .string(u.uuidString.lowercased())])
        case .decimal(let d): .object(["$numberDecimal": .string(d.stringValue)])
        case .link(let link): extendedJSON(link.primaryKey)
        case .object(let fields): .object(fields.mapValues(extendedJSON))
        case .list(let items), .set(let items): .array(items.map(extendedJSON))
        case .map(let entries): .object(entries.mapValues(extendedJSON))
        }
    }
}
