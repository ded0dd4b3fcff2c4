import Synchronization

/// Who may open sync connections and bind sessions: the connection limits of
/// ``ServerConfiguration/Limits``, counted across every connection of the server.
///
/// ```swift
/// guard admission.open(connection: id, address: "10.0.0.7") else { /* refuse */ }
/// defer { admission.close(connection: id, address: "10.0.0.7") }
/// guard admission.bind(user: userID, connection: id) else { /* refuse the session */ }
/// ```
final class SyncAdmission: Sendable {
    let limits: ServerConfiguration.Limits
    private struct State {
        var connectionsByAddress: [String: Int] = [:]
        var connectionsByUser: [String: Set<UInt64>] = [:]
        var usersByConnection: [UInt64: Set<String>] = [:]
    }
    private let state = Mutex(State())

    init(limits: ServerConfiguration.Limits) { self.limits = limits }

    /// Counts a new connection from `address`; false (and nothing counted) past the limit.
    func open(connection: UInt64, address: String) -> Bool {
        state.withLock { state in
            guard state.connectionsByAddress[address, default: 0] < limits.connectionsPerAddress else { return false }
            state.connectionsByAddress[address, default: 0] += 1
            return true
        }
    }

    /// Forgets a connection opened with ``open(connection:address:)`` and the users it bound.
    func close(connection: UInt64, address: String) {
        state.withLock { state in
            state.connectionsByAddress[address, default: 1] -= 1
            if state.connectionsByAddress[address] == 0 { state.connectionsByAddress[address] = nil }
            for user in state.usersByConnection.removeValue(forKey: connection) ?? [] {
                state.connectionsByUser[user]?.remove(connection)
                if state.connectionsByUser[user]?.isEmpty == true { state.connectionsByUser[user] = nil }
            }
        }
    }

    /// Counts `connection` among those of `user` (once, however many sessions it binds); false
    /// when the user already has the most connections allowed.
    func bind(user: String, connection: UInt64) -> Bool {
        state.withLock { state in
            var connections = state.connectionsByUser[user, default: []]
            guard !connections.contains(connection) else { return true }
            guard connections.count < limits.connectionsPerUser else { return false }
            connections.insert(connection)
            state.connectionsByUser[user] = connections
            state.usersByConnection[connection, default: []].insert(user)
            return true
        }
    }

    /// Open connections from `address` (for tests and metrics).
    func connections(from address: String) -> Int { state.withLock { $0.connectionsByAddress[address] ?? 0 } }
}
