import AtollCore
import Foundation
import JWTKit

/// An identity provider's published keys (a JWKS at ``url``), fetched when a login first needs
/// them and kept for ``maxAge``; a token naming a key id the set lacks fetches it again (the
/// provider rotated its keys), at most once per ``refetchInterval``, so tokens with made-up key
/// ids cannot make the server call the provider at every login. Logins waiting at once share
/// one fetch. Keys of kinds an ID token is never checked with are left out.
///
/// ```swift
/// let (keys, algorithms) = try await googleKeys.keys(for: header.kid, now: Date())
/// ```
final class RemoteKeySet: Sendable {
    static let maxAge: TimeInterval = 3600
    static let refetchInterval: TimeInterval = 60

    struct Keys: Sendable {
        var collection: JWTKeyCollection
        var algorithms: [String: String]
        var fetchedAt: Date
    }

    private struct State {
        var keys: Keys?
        var fetching: Task<Keys, any Error>?
        var lastFetch: Date?
    }

    let url: String
    let timeout: TimeInterval
    private let state = Locked(State())

    init(url: String, timeout: TimeInterval) {
        self.url = url
        self.timeout = timeout
    }

    /// The keys to check a token naming `kid` with, at `now`.
    /// - Throws: `ServerError(.authError)` when the keys cannot be fetched or read.
    func keys(for kid: String?, now: Date) async throws -> (JWTKeyCollection, algorithms: [String: String]) {
        enum Step { case use(Keys), wait(Task<Keys, any Error>) }
        let step: Step = state.withLock { current in
            if let keys = current.keys, now < keys.fetchedAt.addingTimeInterval(Self.maxAge) {
                let known = kid.map { keys.algorithms[$0] != nil } ?? false
                let recent = current.lastFetch.map { now < $0.addingTimeInterval(Self.refetchInterval) } ?? false
                if known || recent { return .use(keys) }
            }
            if let fetching = current.fetching { return .wait(fetching) }
            let task = Task { [self] in
                defer { self.state.withLock { $0.fetching = nil } }
                let keys = try await self.download(now: now)
                self.state.withLock { $0.keys = keys }
                return keys
            }
            current.fetching = task
            current.lastFetch = now
            return .wait(task)
        }
        switch step {
        case .use(let keys): return (keys.collection, keys.algorithms)
        case .wait(let task):
            let keys = try await task.value
            return (keys.collection, keys.algorithms)
        }
    }

    private func download(now: Date) async throws -> Keys {
        let answer = try await ProviderCalls.send(.GET, url, timeout: timeout, what: "the identity provider's keys")
        guard answer.status == 200 else {
            throw ServerError(.authError, "the identity provider's keys could not be fetched (HTTP \(answer.status))")
        }
        do {
            let set = try OpenIDKeySet(json: String(decoding: answer.body, as: UTF8.self), field: "jwks", skippingUnusable: true)
            return Keys(collection: try await set.collection(field: "jwks"), algorithms: set.algorithms, fetchedAt: now)
        } catch {
            throw ServerError(.authError, "the identity provider's keys are not a usable JWKS")
        }
    }
}
