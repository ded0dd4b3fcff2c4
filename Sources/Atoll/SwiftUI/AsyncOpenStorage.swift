#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import AtollCore
import Foundation

/// Where `@AsyncOpen` and `@AutoOpen` are: waiting for a user to log in, connecting, downloading,
/// open, or failed.
public enum AsyncOpenState {
    /// A user is logged in; the realm is being opened.
    case connecting
    /// No user is logged in yet: the open starts when one is.
    case waitingForUser
    /// The realm, downloaded and open.
    case open(Realm)
    /// The download's progress (bytes).
    case progress(Progress)
    /// The open failed (for `@AutoOpen`, only when the file could not be opened offline either).
    case error(Error)
}

/// The logic of `@AsyncOpen` and `@AutoOpen`: the app and its current user, the configuration
/// the realm is opened with, and the state the view shows. It follows the app: a login opens the
/// user's realm, a logout waits for the next user, another user reopens.
package final class AsyncOpenStorage: ObservableObject {
    package enum Kind { case asyncOpen, autoOpen }

    @Published package var state: AsyncOpenState
    private let kind: Kind
    private let app: App
    private let callbackQueue: DispatchQueue
    private let timeout: UInt?
    private var partitionValue: (any PartitionValueConvertible)?
    private var configuration: Realm.Configuration?
    private var isSetUp = false
    private var openedFor: User?
    private var appCancellable: AnyCancellable?
    private var openCancellable: AnyCancellable?
    private var deadline: DispatchWorkItem?

    /// The storage of a wrapper of `kind` for the app `appId` (the app of that id made in this
    /// process, as Realm's cached apps; the only app when `nil`), opening on `callbackQueue` (the
    /// main queue in an app).
    package init(kind: Kind, appId: String?, partitionValue: (any PartitionValueConvertible)?, configuration: Realm.Configuration?,
                 timeout: UInt?, callbackQueue: DispatchQueue = .main) {
        self.kind = kind
        app = Self.app(appId)
        self.partitionValue = partitionValue
        self.configuration = configuration
        self.timeout = timeout
        self.callbackQueue = callbackQueue
        state = app.currentUser == nil ? .waitingForUser : .connecting
    }

    private static func app(_ appId: String?) -> App {
        let apps = AppCore.all.filter { appId == nil || $0.id == appId }
        if let appId, apps.count != 1 { return App(id: appId) }
        guard apps.count <= 1 else {
            preconditionFailure("Cannot AsyncOpen the Realm because more than one appId was found. When using multiple Apps you must explicitly pass an appId to indicate which to use.")
        }
        guard let core = apps.first else {
            preconditionFailure("Cannot AsyncOpen the Realm because no appId was found. You must either explicitly pass an appId or initialize an App before displaying your View.")
        }
        return App(core: core)
    }

    /// Starts following the app and opening the realm; once, on the view's first read.
    package func setUp() {
        guard !isSetUp else { return }
        isSetUp = true
        if let user = app.currentUser { open(for: user) }
        appCancellable = app.objectWillChange.receive(on: callbackQueue).sink { [weak self] app in
            guard let self else { return }
            let user = app.currentUser
            if let user, user != openedFor {
                state = .connecting
                open(for: user)
            } else if user == nil, openedFor != nil {
                cancelOpen()
                openedFor = nil
                state = .waitingForUser
            }
        }
    }

    /// The environment's partition value and configuration, read on each view update.
    package func update(partitionValue: (any PartitionValueConvertible)?, configuration: Realm.Configuration) {
        if let partitionValue { self.partitionValue = partitionValue }
        if configuration.syncConfiguration != nil, self.configuration?.syncConfiguration == nil { self.configuration = configuration }
    }

    /// Stops the open and the following of the app.
    package func cancel() {
        cancelOpen()
        appCancellable = nil
    }

    /// The configuration the user's realm is opened with.
    package func configuration(for user: User) -> Realm.Configuration {
        var synced: Realm.Configuration
        if let partitionValue {
            synced = user.configuration(partitionValue: AnyPartition(partitionValue), cancelAsyncOpenOnNonFatalErrors: true)
        } else if let sync = configuration?.syncConfiguration, let initial = sync.initialSubscriptions {
            synced = user.flexibleSyncConfiguration(cancelAsyncOpenOnNonFatalErrors: true, initialSubscriptions: initial.callback,
                                                    rerunOnOpen: initial.rerunOnOpen)
        } else {
            synced = user.flexibleSyncConfiguration(cancelAsyncOpenOnNonFatalErrors: true)
        }
        guard var configuration else { return synced }
        precondition(configuration.syncConfiguration != nil, "The used configuration was not configured with sync.")
        configuration.syncConfiguration = synced.syncConfiguration
        configuration.fileURL = synced.fileURL
        return configuration
    }

    private func cancelOpen() {
        openCancellable?.cancel()
        openCancellable = nil
        deadline?.cancel()
        deadline = nil
    }

    private func open(for user: User) {
        cancelOpen()
        openedFor = user
        let configuration = configuration(for: user)
        openCancellable = Realm.asyncOpen(configuration: configuration)
            // Delivered on the callback queue, as the open is (`receive(on:)` sets both).
            .onProgressNotification { [weak self] progress in
                guard let self else { return }
                switch state {
                case .connecting, .waitingForUser, .progress:
                    let shown = Progress(totalUnitCount: Int64(progress.transferrableBytes))
                    shown.completedUnitCount = Int64(progress.transferredBytes)
                    state = .progress(shown)
                case .open, .error: break
                }
            }
            .receive(on: callbackQueue)
            .sink(receiveCompletion: { [weak self] completion in
                guard let self, case .failure(let error) = completion else { return }
                // Once: the deadline must not report the failure a second time.
                deadline?.cancel()
                deadline = nil
                failed(error, configuration)
            }, receiveValue: { [weak self] realm in
                self?.deadline?.cancel()
                self?.state = .open(realm)
            })
        if let timeout {
            let item = DispatchWorkItem { [weak self] in
                guard let self, openCancellable != nil else { return }
                switch state {
                case .open, .error: return
                default: break
                }
                openCancellable?.cancel()
                failed(SyncError(.connectionFailed, "the realm could not be opened within \(timeout) ms"), configuration)
            }
            deadline = item
            callbackQueue.asyncAfter(deadline: .now() + .milliseconds(Int(timeout)), execute: item)
        }
    }

    /// A failed open: `@AutoOpen` opens what the device has instead (offline first).
    private func failed(_ error: Error, _ configuration: Realm.Configuration) {
        if kind == .autoOpen, let realm = try? Realm(configuration: configuration, queue: callbackQueue === DispatchQueue.main ? nil : callbackQueue) {
            state = .open(realm)
        } else {
            state = .error(error)
        }
    }
}

/// A partition value of any supported type.
private struct AnyPartition: PartitionValueConvertible {
    let base: any PartitionValueConvertible
    init(_ base: any PartitionValueConvertible) { self.base = base }
    var _partitionValue: PartitionValue { base._partitionValue }
}
