import AtollCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Lets `Realm`'s public initializers hand out an instance that is already open, as realm-swift's
/// do: a class's own initializers always make a new object, an initializer of a protocol
/// extension may assign `self`. Only `Realm` conforms; apps never name it.
public protocol _RealmInstances {}

extension Realm: _RealmInstances {
    /// The live realm of `configuration` with `confinement`: the one already open there (same
    /// file, object types, schema version and read-only-ness), else a new one. One thread (actor,
    /// queue) thus has one instance per configuration, and an object handed out there by
    /// `thaw()`, `@ThreadSafe` or a resolved reference can be changed in any `realm.write { }` of
    /// that thread, as with realm-swift. Frozen realms are never shared this way (`freeze()` keeps
    /// its own per version).
    static func instance(_ configuration: Configuration, confinedTo confinement: Confinement) throws -> Realm {
        if case .frozen = confinement { return try Realm(configuration: configuration, confinement: confinement) }
        // Kept until the new realm holds it: a coordinator opened and dropped here would run the
        // file's opening (compaction on launch, say) a second time for the realm.
        let coordinator = try RealmCoordinator.coordinator(for: configuration)
        return try withExtendedLifetime(coordinator) {
            try coordinator.openRealm(like: configuration, confinedTo: confinement)
                ?? Realm(configuration: configuration, confinement: confinement)
        }
    }
}

extension _RealmInstances where Self == Realm {
    /// The realm of `configuration` for the caller: its actor's when it runs on one (the main
    /// actor, say), else its thread's. The first call opens it; later ones on the same thread or
    /// actor return the same instance while it is alive.
    ///
    /// An actor's jobs may run on any thread (on Linux even the main actor's), so a realm opened
    /// there belongs to the actor.
    ///
    /// ```swift
    /// let realm = try Realm()
    /// try realm.write { realm.add(Task(value: ["name": "Buy milk"])) }
    /// ```
    public init(configuration: Realm.Configuration = .defaultConfiguration,
                _ isolation: isolated (any Actor)? = #isolation) throws {
        self = try Realm.instance(configuration, confinedTo: isolation.map { .actor($0) } ?? .thread(pthread_self()))
    }

    /// The default configuration's realm at `fileURL`.
    public init(fileURL: URL) throws {
        var configuration = Realm.Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        self = try Realm.instance(configuration, confinedTo: .thread(pthread_self()))
    }

    /// The realm isolated to `actor`: use it only from that actor.
    ///
    /// ```swift
    /// @MainActor func load() async throws {
    ///     let realm = try await Realm(configuration: config, actor: MainActor.shared)
    /// }
    /// ```
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A,
                          _isolation isolation: isolated (any Actor)? = #isolation) async throws {
        self = try Realm.instance(configuration, confinedTo: .actor(actor))
    }

    /// The realm confined to the serial dispatch queue `queue`: use it, and what it hands out,
    /// only in blocks running on that queue, where its notifications are delivered too. With
    /// `nil`, the realm belongs to the current thread.
    ///
    /// ```swift
    /// let queue = DispatchQueue(label: "db")
    /// queue.async {
    ///     let realm = try! Realm(configuration: config, queue: queue)
    ///     token = realm.objects(Dog.self).observe { change in … }   // called on `queue`
    /// }
    /// ```
    public init(configuration: Realm.Configuration = .defaultConfiguration, queue: DispatchQueue?) throws {
        self = try Realm.instance(configuration, confinedTo: queue.map { .queue($0, .of($0)) } ?? .thread(pthread_self()))
    }

    /// `Realm.open(configuration:downloadBeforeOpen:)` spelled as Realm's initializer.
    public init(configuration: Realm.Configuration = .defaultConfiguration, downloadBeforeOpen: Realm.OpenBehavior,
                _ isolation: isolated (any Actor)? = #isolation) async throws {
        let opened = try await Realm.downloadIfNeeded(configuration, downloadBeforeOpen)
        defer { withExtendedLifetime(opened) {} }
        self = try Realm.instance(configuration, confinedTo: isolation.map { .actor($0) } ?? .thread(pthread_self()))
        _ = (self as Realm).syncSession
    }

    /// The realm isolated to `actor`, downloading first as `downloadBeforeOpen` says.
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A,
                          downloadBeforeOpen: Realm.OpenBehavior = .never,
                          _ isolation: isolated (any Actor)? = #isolation) async throws {
        let opened = try await Realm.downloadIfNeeded(configuration, downloadBeforeOpen)
        defer { withExtendedLifetime(opened) {} }
        self = try Realm.instance(configuration, confinedTo: .actor(actor))
        _ = (self as Realm).syncSession
    }
}

extension Realm {
    /// The realm of the current actor (or thread), opened asynchronously.
    public static func open(configuration: Configuration = .defaultConfiguration,
                            _ isolation: isolated (any Actor)? = #isolation) async throws -> Realm {
        try instance(configuration, confinedTo: isolation.map { .actor($0) } ?? .thread(pthread_self()))
    }
}
