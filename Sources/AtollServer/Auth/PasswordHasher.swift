import AtollCore
import Crypto
import CryptoExtras
import Foundation

/// Hashes and checks passwords with PBKDF2-HMAC-SHA256, a random 16-byte salt and at least 100,000 rounds.
///
/// A hash is stored as `pbkdf2-sha256$<rounds>$<salt base64>$<key base64>`, so the rounds can grow later
/// without invalidating the hashes already stored.
///
/// ```swift
/// let hasher = PasswordHasher()
/// let stored = try hasher.hash("correct horse")
/// hasher.verify("correct horse", against: stored) // true
/// ```
public struct PasswordHasher: Sendable {
    /// Rounds used for new hashes unless configured.
    public static let defaultRounds = 210_000
    /// The fewest rounds a configuration may ask for.
    public static let minimumRounds = 100_000
    static let scheme = "pbkdf2-sha256"
    static let saltByteCount = 16
    static let keyByteCount = 32

    package let rounds: Int
    /// Runs the hashes off the event loops, a bounded number at once.
    let workers: HashingPool

    /// - Parameter concurrency: hashes computed at once; the rest wait their turn (a flood of logins
    ///   then costs queueing, not every core of the machine).
    package init(rounds: Int = PasswordHasher.defaultRounds, concurrency: Int = 2) {
        self.rounds = max(rounds, Self.minimumRounds)
        workers = HashingPool(concurrency: concurrency)
    }

    /// A new salted hash of `password`.
    package func hash(_ password: String) throws -> String {
        let salt = Secrets.randomBytes(Self.saltByteCount)
        let key = try Self.pbkdf2(
            password: Array(password.utf8), salt: salt, rounds: rounds, byteCount: Self.keyByteCount)
        return [Self.scheme, String(rounds), Data(salt).base64EncodedString(), Data(key).base64EncodedString()]
            .joined(separator: "$")
    }

    /// Whether `password` is the one `stored` was made from. A malformed `stored` never matches.
    package func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.scheme, let rounds = Int(parts[1]), rounds > 0,
            let salt = Data(base64Encoded: String(parts[2])), let expected = Data(base64Encoded: String(parts[3])),
            !expected.isEmpty,
            let key = try? Self.pbkdf2(
                password: Array(password.utf8), salt: Array(salt), rounds: rounds, byteCount: expected.count)
        else { return false }
        return Secrets.constantTimeEqual(key, Array(expected))
    }

    /// ``hash(_:)`` on a worker thread: a slow hash must not hold up the server's event loops or
    /// the cooperative pool, or every connection stalls while someone logs in.
    package func hashOffLoop(_ password: String) async throws -> String {
        try await workers.run { try self.hash(password) }
    }

    /// ``verify(_:against:)`` on a worker thread.
    /// - Throws: `ServerError(.tooManyRequests)` when too many hashes already wait their turn.
    package func verifyOffLoop(_ password: String, against stored: String) async throws -> Bool {
        try await workers.run { self.verify(password, against: stored) }
    }

    /// The digest a PBKDF2 may be built on.
    package enum Digest: Sendable {
        case sha256
        /// Only for checking against published test vectors (RFC 6070).
        case insecureSHA1
    }

    /// PBKDF2 (RFC 8018) over HMAC with `digest`: `byteCount` bytes derived from `password` and `salt`.
    package static func pbkdf2(
        password: [UInt8], salt: [UInt8], rounds: Int, byteCount: Int, digest: Digest = .sha256
    ) throws -> [UInt8] {
        let function: KDF.Insecure.PBKDF2.HashFunction =
            switch digest {
            case .sha256: .sha256
            case .insecureSHA1: .insecureSHA1
            }
        // The rounds are checked by the configuration (at least `minimumRounds`); test vectors use fewer.
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: function, outputByteCount: byteCount, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }
}

/// Threads for password hashes: at most `concurrency` run at once, at most `maxWaiting` wait, the
/// rest are refused at once (`tooManyRequests`) so memory stays bounded under a flood.
final class HashingPool: Sendable {
    let concurrency: Int
    let maxWaiting: Int
    private let queue = DispatchQueue(label: "atoll.password-hashing", qos: .utility, attributes: .concurrent)
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())
    private enum Admission { case now, wait, refuse }

    init(concurrency: Int, maxWaiting: Int? = nil) {
        self.concurrency = max(1, concurrency)
        self.maxWaiting = maxWaiting ?? 1_024 * self.concurrency
    }

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let admission: Admission = state.withLock { state in
            if state.running < concurrency {
                state.running += 1
                return .now
            }
            return state.waiting.count < maxWaiting ? .wait : .refuse
        }
        switch admission {
        case .refuse: throw ServerError(.tooManyRequests, "the server is busy checking passwords; try again shortly", retryAfter: 1)
        case .wait:
            // Resumed by a finishing hash, which hands over its slot (running stays counted).
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state -> Bool in
                    if state.running < concurrency {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        case .now: break
        }
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
