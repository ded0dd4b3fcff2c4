import AtollCore
import Foundation

/// realm-swift's completion forms of the API key calls: the Objective-C shapes (`(key?, error?)`,
/// `(error?)`) and the Swift `Result` ones. The completion runs on a background queue, as
/// realm-swift's network callbacks do.
///
/// ```swift
/// user.apiKeysAuth.createAPIKey(named: "build server") { result in
///     if case .success(let key) = result { print(key.key!) }
/// }
/// ```
extension APIKeyAuth {
    private func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T,
                                  _ completion: @escaping @Sendable (Result<T, Swift.Error>) -> Void) {
        _Concurrency.Task {
            do { completion(.success(try await work())) } catch { completion(.failure(error)) }
        }
    }

    @preconcurrency
    public func createAPIKey(named name: String, completion: @escaping @Sendable (UserAPIKey?, Swift.Error?) -> Void) {
        run({ try await createAPIKey(named: name) }) { completion(try? $0.get(), $0.error) }
    }

    @preconcurrency
    public func createAPIKey(named name: String, completion: @escaping @Sendable (Result<UserAPIKey, Swift.Error>) -> Void) {
        run({ try await createAPIKey(named: name) }, completion)
    }

    @preconcurrency
    public func fetchAPIKey(_ objectId: ObjectId, completion: @escaping @Sendable (UserAPIKey?, Swift.Error?) -> Void) {
        run({ try await fetchAPIKey(objectId) }) { completion(try? $0.get(), $0.error) }
    }

    @preconcurrency
    public func fetchAPIKey(_ objectId: ObjectId, _ completion: @escaping @Sendable (Result<UserAPIKey, Swift.Error>) -> Void) {
        run({ try await fetchAPIKey(objectId) }, completion)
    }

    @preconcurrency
    public func fetchAPIKeys(completion: @escaping @Sendable ([UserAPIKey]?, Swift.Error?) -> Void) {
        run({ try await fetchAPIKeys() }) { completion(try? $0.get(), $0.error) }
    }

    @preconcurrency
    public func fetchAPIKeys(_ completion: @escaping @Sendable (Result<[UserAPIKey], Swift.Error>) -> Void) {
        run({ try await fetchAPIKeys() }, completion)
    }

    @preconcurrency
    public func deleteAPIKey(_ objectId: ObjectId, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run({ try await deleteAPIKey(objectId) }) { completion($0.error) }
    }

    @preconcurrency
    public func enableAPIKey(_ objectId: ObjectId, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run({ try await enableAPIKey(objectId) }) { completion($0.error) }
    }

    @preconcurrency
    public func disableAPIKey(_ objectId: ObjectId, completion: @escaping @Sendable (Swift.Error?) -> Void) {
        run({ try await disableAPIKey(objectId) }) { completion($0.error) }
    }
}

extension Result {
    /// The failure, or nil.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
