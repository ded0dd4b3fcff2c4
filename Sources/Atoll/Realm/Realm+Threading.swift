import AtollCore
import Foundation

extension Realm {
    /// An immutable snapshot of the realm that any thread may read.
    public func freeze() -> Realm {
        verifyThread()
        if isFrozen { return self }
        if let frozen = coordinator.frozenRealm(at: snapshotVersion) { return frozen }
        let frozen: Realm
        do {
            frozen = try Realm(configuration: configuration, confinement: .frozen)
        } catch {
            preconditionFailure("cannot freeze \(coordinator.path): \(error)")
        }
        // Without SQLite snapshots, a commit by another realm between this realm's snapshot and
        // the frozen one's open shows in the frozen one; only a frozen realm of this very
        // version is shared.
        if frozen.snapshotVersion == snapshotVersion { coordinator.keepFrozen(frozen) }
        return frozen
    }

    /// A live realm of the same configuration on the current thread: one already open there when
    /// there is one (the one in a write transaction first), so that what it hands out can be
    /// changed in that realm's `write { }`, as with realm-swift's per-thread realms.
    public func thaw() -> Realm {
        do {
            return try Realm.ofCurrentThread(configuration, atLeast: snapshotVersion)
        } catch {
            preconditionFailure("cannot thaw \(coordinator.path): \(error)")
        }
    }

    /// The live realm of `configuration` on the current thread (``Realm/instance(_:confinedTo:)``)
    /// for what `thaw()` and `@ThreadSafe` hand out there. An open realm behind `version` (the
    /// version of what is handed out) advances first, as realm-core advances a realm resolving a
    /// newer reference; one that is not behind stays where it is (its results do not change under
    /// the caller).
    static func ofCurrentThread(_ configuration: Configuration, atLeast version: Int64 = 0) throws -> Realm {
        let live = try instance(configuration, confinedTo: .thread(pthread_self()))
        if !live.isInWriteTransaction, live.snapshotVersion < version { live.refresh() }
        return live
    }

    /// Opens a realm and calls `callback` with it (or the error) on `callbackQueue`. A synced
    /// realm first downloads every change the server has (as `downloadBeforeOpen: .always`);
    /// the returned task reports that download's progress and cancels the open (the callback is
    /// then never called).
    ///
    /// ```swift
    /// let task = Realm.asyncOpen(configuration: config) { result in … }
    /// task.addProgressNotification { progress in print(progress.fractionTransferred) }
    /// ```
    @discardableResult
    public static func asyncOpen(configuration: Configuration = .defaultConfiguration,
                                 callbackQueue: DispatchQueue = .main,
                                 callback: @escaping @Sendable (Result<Realm, Swift.Error>) -> Void) -> AsyncOpenTask {
        let task = AsyncOpenTask()
        task.run {
            let opened: Realm?
            do {
                opened = try await downloadIfNeeded(configuration, .always) { task.attach($0) }
            } catch {
                task.deliver(on: callbackQueue) { callback(.failure(error)) }
                return
            }
            let keep = UncheckedRealm(realm: opened, strong: opened)
            task.deliver(on: callbackQueue) {
                defer { withExtendedLifetime(keep) {} }
                // The main queue is the main actor's: its realm belongs to the actor, whose jobs
                // may run on any thread.
                let open = { () throws -> Realm in
                    if callbackQueue === DispatchQueue.main {
                        let box = try MainActor.assumeIsolated {
                            UncheckedRealm(strong: try Realm.instance(configuration, confinedTo: .actor(MainActor.shared)))
                        }
                        return box.strong!
                    }
                    return try Realm.instance(configuration, confinedTo: .queue(callbackQueue, .of(callbackQueue)))
                }
                callback(Result { try open() })
            }
        }
        return task
    }

    /// Runs `block` in a write transaction on the realm's actor.
    ///
    /// The isolation parameter comes first and is not optional, as realm-swift declares it: with
    /// it last and optional, Swift 6.3 crashes compiling `try await realm.asyncWrite { realm… }`
    /// inside an actor of the app's (ActorStoreApp keeps that pattern compiling).
    /// While another realm of this process writes, the caller suspends instead of blocking its
    /// thread on the write lock.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated any Actor = #isolation,
                                   _ block: () throws -> Result) async throws -> Result {
        if coordinator.writers.load(ordering: .sequentiallyConsistent) > 0 {
            let coordinator = self.coordinator
            await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
                coordinator.whenWritersIdle { resumed.resume() }
            }
        }
        return try write(block)
    }

    /// Moves the realm to the newest version on its actor, delivering the notifications of what
    /// changed; `true` when there was a newer version.
    @discardableResult
    public func asyncRefresh(_isolation actor: isolated any Actor = #isolation) async -> Bool {
        refresh()
    }

    /// Realm-level change notifications.
    public enum Notification: String, Sendable {
        case didChange = "RLMRealmDidChangeNotification"
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// Calls `block` after every change of the realm (own writes and other realms' commits).
    public func observe(_ block: @escaping (Notification, Realm) -> Void) -> NotificationToken {
        verifyThread()
        return notifiers.register(RealmNotifier(block: block), in: self)
    }
}

extension ObjectBase {
    /// An immutable snapshot of the object that any thread may read.
    ///
    /// ```swift
    /// let frozen = dog.freeze()
    /// DispatchQueue.global().async { print(frozen.name) }
    /// ```
    public func freeze() -> Self {
        guard let state = _managedState else {
            preconditionFailure("Unmanaged objects cannot be frozen; add the object to a realm first")
        }
        if state.realm.isFrozen { return self }
        return state.realm.freeze().materialize(state.table, row: state.row, as: Self.self)!
    }

    /// The live object of a frozen one, in a realm on the current thread (`nil` if it was deleted).
    public func thaw() -> Self? {
        guard let state = _managedState else { return self }
        guard state.realm.isFrozen else { return self }
        let live = state.realm.thaw()
        guard (try? live.store.exists(state.table, state.row)) == true else {
            return nil
        }
        return live.materialize(state.table, row: state.row, as: Self.self)
    }
}

final class RealmNotifier: Notifier {
    let block: (Realm.Notification, Realm) -> Void

    init(block: @escaping (Realm.Notification, Realm) -> Void) {
        self.block = block
    }

    override func deliver(_ summary: ChangeSummary, in realm: Realm) {
        guard !summary.isEmpty else { return }
        block(.didChange, realm)
    }
}
