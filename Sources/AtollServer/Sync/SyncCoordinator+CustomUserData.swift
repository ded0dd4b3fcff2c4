import AtollCore
import Foundation

/// Custom user data read from the synced data the coordinator holds (``CustomUserDataReader``).
extension SyncCoordinator {
    /// The fields of the object of `settings.type` whose `settings.userIdField` is `userID` (as a
    /// string, or an ObjectId of that hex), in the flexible-sync realm or the partition the
    /// settings name; nil when there is no such realm or object. A realm is never created here.
    ///
    /// The realm's state is the one flexible sync keeps in memory (built once, then kept up to date
    /// by every upload); a field that is the primary key is looked up directly, another is found
    /// by a scan of the type's objects, and when several objects hold the user's id, none counts.
    package func customUserData(appID: String, settings: ServerConfiguration.CustomUserData, userID: String) async throws
        -> [String: Value]?
    {
        let path = settings.partition.map { PartitionValue.string($0).path } ?? FlexibleSync.realmPath
        let key = RealmKey(appID: appID, path: path)
        if realms[key] == nil {
            guard try await store.realms(appID: appID).contains(where: { $0.path == path }) else { return nil }
        }
        let state = try await snapshot(of: try await realm(appID: appID, path: path)).state
        guard let objects = state.objects[settings.type] else { return nil }
        // A property the object never set has its default, as the document a device wrote to
        // App Services had it: an empty list is a list (`team IN %user.custom_data.teams`).
        func whole(_ fields: [String: Value]?) -> [String: Value]? {
            guard var fields, let schema = state.schema[settings.type] else { return fields }
            for property in schema.properties where fields[property.name] == nil { fields[property.name] = state.defaultValue(property) }
            return fields
        }
        var wanted: [Value] = [.string(userID)]
        if let id = try? ObjectId(string: userID) { wanted.append(.objectId(id)) }
        if state.schema[settings.type]?.primaryKey == settings.userIdField {
            return whole(wanted.lazy.compactMap { objects[$0] }.first)
        }
        // Not a key: two objects may name the user, and which one counts must not depend on who
        // wrote last (a forged duplicate could shadow the real one). Neither does, said in the log.
        let matches = Array(objects.values.lazy.filter { fields in fields[settings.userIdField].map(wanted.contains) ?? false }.prefix(2))
        guard matches.count < 2 else {
            logger.warning("custom user data left out: several objects hold the user's id",
                           metadata: ["app": "\(appID)", "type": "\(settings.type)", "field": "\(settings.userIdField)", "user": "\(userID)"])
            return nil
        }
        return whole(matches.first)
    }
}
