@_spi(Testing) import Atoll
import AtollTesting

/// Device `device` of `server`, logged in anonymously, its sync errors recorded, and its flexible
/// realm of `SyncedTask`s open and subscribed as `subscribe` says (everything by default).
@MainActor func flexibleDevice(
    _ server: SyncTestServer, _ device: String,
    subscribe: @escaping (SyncSubscriptionSet) -> Void = { $0.append(QuerySubscription<SyncedTask>(name: "all")) }
) async throws -> (user: User, realm: Realm, errors: Recorder<SyncError>) {
    let app = server.app(device: device)
    let errors = Recorder<SyncError>()
    app.syncManager.errorHandler = { error, _ in if let error = error as? SyncError { errors.append(error) } }
    let user = try await app.login(credentials: .anonymous)
    var configuration = user.flexibleSyncConfiguration()
    configuration.objectTypes = [SyncedTask.self]
    let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    let subscriptions = realm.subscriptions
    try await subscriptions.update { subscribe(subscriptions) }
    return (user, realm, errors)
}

/// The compensating writes (code 11) among `errors`.
func rejections(_ errors: Recorder<SyncError>) -> [SyncError] {
    errors.all.filter { $0.code == .writeRejected }
}
