import Foundation

extension User {
    /// Whether the user has only anonymous identities: logging out removes it, as it could never
    /// log in again (a user linked to another identity is no longer anonymous).
    var isAnonymous: Bool {
        let identities = identities
        return identities.isEmpty ? provider == "anon-user" : identities.allSatisfy { $0.providerType == "anon-user" }
    }

    struct LinkAnswer: Decodable {
        let access_token: String
        let user_id: String
    }

    /// Adds the identity of `credentials` to this logged-in user, which keeps its id and data: the
    /// usual upgrade of an anonymous user to an e-mail account.
    ///
    /// ```swift
    /// try await app.emailPasswordAuth.registerUser(email: "sam@shire.me", password: "potatoes")
    /// let same = try await anonymous.linkUser(credentials: .emailPassword(email: "sam@shire.me", password: "potatoes"))
    /// print(same.identities.map(\.providerType)) // ["anon-user", "local-userpass"]
    /// ```
    /// - Throws: `AppError`: `.accountNameInUse` when the identity belongs to another user,
    ///   `.badRequest` for anonymous or API key credentials or an identity the user already has,
    ///   `.invalidPassword` for credentials the server refuses, `.invalidSession` when the user logged out here.
    @discardableResult
    public func linkUser(credentials: Credentials) async throws -> User {
        let path = "/api/client/v1/app/\(core.id)/auth/providers/\(credentials.provider)/login?link=true"
        let answer = try core.http.decode(LinkAnswer.self, from: try await authorized("POST", path, body: try credentials.requestBody()), "link")
        guard answer.user_id == id else {
            throw AppError(.httpRequestFailed, "the server linked the identity to another user (\(answer.user_id))")
        }
        let profileData = try await core.http.send("GET", "/api/client/v1/auth/profile", bearer: answer.access_token)
        let profile = try core.http.decode(AppCore.ProfileAnswer.self, from: profileData, "profile")
        guard let refreshToken, state == .loggedIn else {
            throw AppError.loggedOut("the user \(id) logged out while linking")
        }
        loggedIn(accessToken: answer.access_token, refreshToken: refreshToken, provider: provider,
                 profile: AppCore.ProfileAnswer.data(in: profileData),
                 identities: profile.identities.map { UserIdentity(providerType: $0.provider_type, identifier: $0.id) })
        return self
    }

    /// ``linkUser(credentials:)`` calling `completion` (on a background queue, as realm-swift's
    /// network callbacks are) with the user or the error.
    @preconcurrency
    public func linkUser(credentials: Credentials, _ completion: @escaping @Sendable (Result<User, Swift.Error>) -> Void) {
        _Concurrency.Task {
            do { completion(.success(try await linkUser(credentials: credentials))) } catch { completion(.failure(error)) }
        }
    }

    /// ``logOut()`` calling `completion` with nil or the error.
    @preconcurrency
    public func logOut(completion: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            do { try await logOut(); completion(nil) } catch { completion(error) }
        }
    }

    /// ``remove()`` calling `completion` with nil or the error.
    @preconcurrency
    public func remove(completion: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            do { try await remove(); completion(nil) } catch { completion(error) }
        }
    }

    /// ``delete()`` calling `completion` with nil or the error.
    @preconcurrency
    public func delete(completion: @escaping @Sendable (Swift.Error?) -> Void) {
        _Concurrency.Task {
            do { try await delete(); completion(nil) } catch { completion(error) }
        }
    }

    /// The folder of the user's synced realms on this device.
    var realmsFolder: URL { core.folder.appendingPathComponent(AppCore.safeName(id), isDirectory: true) }

    /// Deletes the user's synced realms on this device (a deleted user's data is gone, as in
    /// realm-swift); a file still open in the process goes when it is closed and the app starts again.
    func removeLocalRealms() {
        let folder = realmsFolder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        var pending: [SyncError.ActionToken] = []
        for name in names where name.hasSuffix(".realm") {
            let path = folder.appendingPathComponent(name).standardizedFileURL.path
            let token = core.syncManager.record(FileAction(kind: .delete, realmPath: path, backupPath: nil))
            if !core.syncManager.runFileAction(for: token) { pending.append(token) }
        }
        guard !pending.isEmpty else { return }
        // A file the stopping sync sessions still hold goes once they let it go (a few seconds at
        // most); one the app keeps open waits for the next start.
        let manager = core.syncManager
        _Concurrency.Task { [pending] in
            var pending = pending
            for _ in 0..<50 where !pending.isEmpty {
                try? await _Concurrency.Task.sleep(for: .milliseconds(100))
                pending.removeAll { manager.runFileAction(for: $0) }
            }
        }
    }
}
