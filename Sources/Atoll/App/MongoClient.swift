import Foundation

/// Remote data access, as App Services served it: a user's calls straight to the server's data
/// (the app's synced objects, under the app's rules), without a synced realm.
///
/// ```swift
/// let tasks = user.mongoClient("mongodb-atlas").database(named: "tracker").collection(withName: "Task")
/// let open = try await tasks.find(filter: ["done": false])
/// ```
public final class MongoClient: Sendable {
    /// The service name (`mongodb-atlas`).
    public let name: String
    let user: User

    init(user: User, name: String) {
        self.user = user
        self.name = name
    }

    /// The database named `name`: on Atoll, the app's (its id, or the name its configuration gives).
    public func database(named name: String) -> MongoDatabase {
        MongoDatabase(client: self, name: name)
    }
}

/// A database of a ``MongoClient``; its collections are the app's object types.
public final class MongoDatabase: Sendable {
    public let name: String
    let client: MongoClient

    init(client: MongoClient, name: String) {
        self.client = client
        self.name = name
    }

    /// The collection of the object type `name` (`Task`).
    public func collection(withName name: String) -> MongoCollection {
        MongoCollection(database: self, name: name)
    }
}

extension User {
    /// A client for remote data access through the service `serviceName` (`"mongodb-atlas"`).
    public func mongoClient(_ serviceName: String) -> MongoClient {
        MongoClient(user: self, name: serviceName)
    }

    /// A remote data access request (docs/protocol.md §1.6) with the access token, retried once
    /// with a fresh token if the server refuses it.
    func remoteDataRequest(_ action: String, body: Data) async throws -> Data {
        let app = core.id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? core.id
        let path = "/api/client/v1/app/\(app)/mongodb/\(action)"
        do {
            let token = try await validAccessToken()
            do {
                return try await core.http.send("POST", path, bearer: token, body: body)
            } catch let error as AppError where error.code == .invalidSession && error.isRefusedByServer {
                return try await core.http.send("POST", path, bearer: try await validAccessToken(forceRefresh: true), body: body)
            }
        } catch let error as AppError where error.code == .userDisabled || error.code == .userNotFound {
            setLoggedOut(removing: false)
            throw error
        }
    }
}
