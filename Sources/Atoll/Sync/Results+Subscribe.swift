import AtollCore
import Foundation

/// When `Results.subscribe` waits for the server's data.
public enum WaitForSyncMode: Sendable, Hashable {
    /// Waits when the subscription is new (or its query changed); an existing one returns at once.
    case onCreation
    /// Always waits until the server has sent the newest data (needs a connection).
    case always
    /// Never waits: the data downloads in the background.
    case never
}

extension Results {
    /// Subscribes to the objects of the results' query (its filter; sorting and distinct are
    /// local), then waits as `waitForSync` says.
    ///
    /// ```swift
    /// let mine = try await realm.objects(Task.self).where { $0.owner == "Frodo" }.subscribe(name: "mine")
    /// ```
    /// Unnamed, it reuses an unnamed subscription with the same query; named, it updates the
    /// query of the subscription with that name. `timeout` (seconds) bounds the wait: past it,
    /// `POSIXError(.ETIMEDOUT)` is thrown and the subscription stays.
    ///
    /// - Precondition: the results are of `realm.objects(_:)` in a flexible-sync realm, not frozen.
    public func subscribe(name: String? = nil, waitForSync: WaitForSyncMode = .onCreation, timeout: TimeInterval? = nil,
                          _ isolation: isolated (any Actor)? = #isolation) async throws -> Results<Element> {
        let realm = core.realm
        precondition(!realm.isFrozen, "Cannot subscribe to frozen results")
        guard case .table = core.base else {
            preconditionFailure("Only results of realm.objects(_:) can be subscribed to, not those of a list or set")
        }
        let subscriptions = realm.subscriptions
        let objectType = core.objectType
        let query = core.expression.predicate.description
        ResultsSubscriptionNames.record(name, for: core)
        let exists = subscriptions.box.current.contains {
            $0.name == name && $0.objectType == objectType && $0.query == query
        }
        if exists && waitForSync != .always { return self }
        let version = try subscriptions.box.commit {
            subscriptions.box.insertOrAssign(name: name, objectType: objectType, query: query)
        }
        if waitForSync == .never { return self }
        try await subscriptions.box.wait(for: version).run(timeout: timeout)
        // Back on the realm's actor: show the downloaded objects.
        if isolation != nil { realm.refresh() }
        return self
    }

    /// Removes the subscription `subscribe` made for these results: the one with the name it
    /// was given, or else the unnamed subscription with their query. Commits without waiting;
    /// the objects stay until the server removes them.
    public func unsubscribe() {
        let realm = core.realm
        let subscriptions = realm.subscriptions
        let objectType = core.objectType
        let query = core.expression.predicate.description
        let name = ResultsSubscriptionNames.name(for: core)
        let matches: (StoredSubscription) -> Bool = { subscription in
            if let name { return subscription.name == name }
            return subscription.name == nil && subscription.objectType == objectType && subscription.query == query
        }
        guard subscriptions.box.current.contains(where: matches) else { return }
        do {
            try subscriptions.box.commit { subscriptions.box.removeFirst(where: matches) }
        } catch {
            preconditionFailure("the subscriptions could not be updated: \(error)")
        }
    }
}

/// The name each results value subscribed with, for `unsubscribe()`.
enum ResultsSubscriptionNames {
    private struct Entry: @unchecked Sendable {
        weak var core: ResultsCore?
        let name: String
    }

    private static let entries = Locked<[ObjectIdentifier: Entry]>([:])

    static func record(_ name: String?, for core: ResultsCore) {
        let key = ObjectIdentifier(core)
        entries.withLock { entries in
            entries = entries.filter { $0.value.core != nil }
            if let name {
                entries[key] = Entry(core: core, name: name)
            } else {
                entries.removeValue(forKey: key)
            }
        }
    }

    static func name(for core: ResultsCore) -> String? {
        entries.withLock { entries in
            guard let entry = entries[ObjectIdentifier(core)], entry.core === core else { return nil }
            return entry.name
        }
    }
}
