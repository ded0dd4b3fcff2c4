import AtollCore
import Foundation

/// A change to an app's schema that clients cannot merge (docs/merge.md): the server rewrites its
/// data and every client resets.
package enum BreakingSchemaChange: Sendable, Hashable, CustomStringConvertible {
    /// Removes property `name` of object type `type`.
    case removeProperty(type: String, name: String)
    /// Gives property `name` of `type` another scalar type (and optionality when `isOptional` is set).
    case changePropertyType(type: String, name: String, to: PropertyType, isOptional: Bool?)

    package var type: String {
        switch self { case .removeProperty(let type, _), .changePropertyType(let type, _, _, _): type }
    }

    package var name: String {
        switch self { case .removeProperty(_, let name), .changePropertyType(_, let name, _, _): name }
    }

    package var description: String {
        switch self {
        case .removeProperty(let type, let name): "property \(type).\(name) was removed"
        case .changePropertyType(let type, let name, let newType, _): "property \(type).\(name) became \(newType.rawValue)"
        }
    }

    /// `state` rewritten by the change (pure: `ReplicaState.removingProperty` or `changingPropertyType`).
    package func apply(to state: ReplicaState) throws -> ReplicaState {
        switch self {
        case .removeProperty(let type, let name):
            return try state.removingProperty(type: type, name: name)
        case .changePropertyType(let type, let name, let newType, let isOptional):
            return try state.changingPropertyType(type: type, name: name, to: newType, isOptional: isOptional)
        }
    }
}

extension SyncCoordinator {
    /// Applies a breaking schema change to every realm of an app that has the property: each realm's
    /// data is rewritten and its history starts over from that snapshot under a new epoch with reason
    /// `breakingSchemaChange`, in one store transaction per realm. Bound sessions are told to reset;
    /// no automatic reset mode can carry a file over, so clients end up in the manual handler.
    ///
    /// - Returns: the paths of the realms rewritten.
    /// - Throws: `SchemaError` (`.unknownType`, `.unknownProperty`, `.invalidPrimaryKey`,
    ///   `.unsupportedType`) before anything is written when no realm can take the change.
    @discardableResult
    package func applyBreakingChange(_ change: BreakingSchemaChange, appID: String) async throws -> [String] {
        let realms = try await store.realms(appID: appID)
        // Check first, so a change that cannot apply leaves every realm as it was.
        var candidates: [StoredRealm] = []
        var sawType = false
        for realm in realms {
            let state = try await currentState(of: realm.id)
            guard let schema = state.schema[change.type] else { continue }
            sawType = true
            guard schema[property: change.name] != nil else { continue }
            _ = try change.apply(to: state)
            candidates.append(realm)
        }
        guard !candidates.isEmpty else {
            throw sawType
                ? SchemaError(.unknownProperty, "\(change.type) has no property \(change.name) in any realm of app \(appID)",
                              objectType: change.type, property: change.name)
                : SchemaError(.unknownType, "no realm of app \(appID) has an object type \(change.type)", objectType: change.type)
        }
        let timestamp = self.timestamp()
        var rewritten: [String] = []
        for realm in candidates {
            let epoch = Self.randomEpoch()
            let restarted = try await store.rewriteHistory(realmID: realm.id, epoch: epoch, reason: .breakingSchemaChange) { entries in
                var state = ReplicaState()
                for entry in entries { state.apply(entry.changeset) }
                guard state.schema[change.type]?[property: change.name] != nil else { return nil }
                return Self.snapshot(of: try change.apply(to: state), timestamp: timestamp)
            }
            guard restarted else { continue }
            var after = realm
            after.epoch = epoch
            after.epochReason = .breakingSchemaChange
            after.compactedThrough = 0
            try await historyReplaced(after, reason: .breakingSchemaChange, message: "a breaking schema change: \(change)")
            rewritten.append(realm.path)
        }
        logger.notice("breaking schema change", metadata: ["app": "\(appID)", "change": "\(change)", "realms": "\(rewritten.count)"])
        return rewritten
    }
}
