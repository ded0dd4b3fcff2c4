import AtollCore

/// Who may open sync connections and bind sessions, and what their users may hold: the
/// connection and per-user limits of ``ServerConfiguration/Limits``, counted across every
/// connection of the server.
///
/// ```swift
/// guard admission.open(connection: id, address: "10.0.0.7") else { /* refuse */ }
/// defer { admission.close(connection: id, address: "10.0.0.7") }
/// if let limit = admission.admitSession(1, user: userID, connection: id) { /* refuse the session */ }
/// ```
final class SyncAdmission: Sendable {
    let limits: ServerConfiguration.Limits
    /// What one user holds across its connections.
    private struct UserLoad {
        var sessions = 0
        var heldObjects = 0
        var bytesInFlight = 0
        var isEmpty: Bool { sessions == 0 && heldObjects == 0 && bytesInFlight == 0 }
    }
    private struct SessionKey: Hashable {
        var connection: UInt64
        var session: SessionID
    }
    private struct State {
        var connectionsByAddress: [String: Int] = [:]
        var connectionsByUser: [String: Set<UInt64>] = [:]
        var usersByConnection: [UInt64: Set<String>] = [:]
        var users: [String: UserLoad] = [:]
        /// Bound sessions: their user and the objects they claim to hold.
        var sessions: [SessionKey: (user: String, heldObjects: Int)] = [:]
        /// The bound sessions of each connection (closing one does not scan every session).
        var sessionsByConnection: [UInt64: Set<SessionID>] = [:]
        /// Partly received messages: whose, and how many bytes.
        var inFlight: [UInt64: (user: String, bytes: Int)] = [:]
        /// The client address of each open connection, and the bytes in flight of each address.
        var addressByConnection: [UInt64: String] = [:]
        var bytesInFlightByAddress: [String: Int] = [:]

        mutating func changeBytesInFlight(ofAddressOf connection: UInt64, by delta: Int) {
            guard let address = addressByConnection[connection] else { return }
            let bytes = bytesInFlightByAddress[address, default: 0] + delta
            bytesInFlightByAddress[address] = bytes == 0 ? nil : bytes
        }

        mutating func change(_ user: String, _ update: (inout UserLoad) -> Void) {
            var load = users[user] ?? UserLoad()
            update(&load)
            users[user] = load.isEmpty ? nil : load
        }
    }
    private let state = Locked(State())

    init(limits: ServerConfiguration.Limits) { self.limits = limits }

    /// Counts a new connection from `address`; false (and nothing counted) past the limit.
    func open(connection: UInt64, address: String) -> Bool {
        state.withLock { state in
            guard state.connectionsByAddress[address, default: 0] < limits.connectionsPerAddress else { return false }
            state.connectionsByAddress[address, default: 0] += 1
            state.addressByConnection[connection] = address
            return true
        }
    }

    /// Forgets a connection opened with ``open(connection:address:)``: the users it bound, its
    /// sessions and what they held.
    func close(connection: UInt64, address: String) {
        state.withLock { state in
            state.connectionsByAddress[address, default: 1] -= 1
            if state.connectionsByAddress[address] == 0 { state.connectionsByAddress[address] = nil }
            for user in state.usersByConnection.removeValue(forKey: connection) ?? [] {
                state.connectionsByUser[user]?.remove(connection)
                if state.connectionsByUser[user]?.isEmpty == true { state.connectionsByUser[user] = nil }
            }
            for session in state.sessionsByConnection.removeValue(forKey: connection) ?? [] {
                Self.release(SessionKey(connection: connection, session: session), in: &state)
            }
            if let held = state.inFlight.removeValue(forKey: connection) {
                state.change(held.user) { $0.bytesInFlight -= held.bytes }
                state.changeBytesInFlight(ofAddressOf: connection, by: -held.bytes)
            }
            state.addressByConnection[connection] = nil
        }
    }

    /// Counts session `session` of `user` on `connection`; returns the limit that refuses it
    /// (nothing counted then): ``ServerConfiguration/Limits/connectionsPerUser`` or
    /// ``ServerConfiguration/Limits/sessionsPerUser``.
    func admitSession(_ session: SessionID, user: String, connection: UInt64) -> BindPolicy.Limit? {
        state.withLock { state in
            var connections = state.connectionsByUser[user, default: []]
            let isNewConnection = !connections.contains(connection)
            if isNewConnection, connections.count >= limits.connectionsPerUser { return .connectionsPerUser }
            guard state.users[user, default: UserLoad()].sessions < limits.sessionsPerUser else { return .sessionsPerUser }
            if isNewConnection {
                connections.insert(connection)
                state.connectionsByUser[user] = connections
                state.usersByConnection[connection, default: []].insert(user)
            }
            let key = SessionKey(connection: connection, session: session)
            if state.sessions[key] != nil { Self.release(key, in: &state) }
            state.sessions[key] = (user, 0)
            state.sessionsByConnection[connection, default: []].insert(session)
            state.change(user) { $0.sessions += 1 }
            return nil
        }
    }

    /// Forgets a session counted by ``admitSession(_:user:connection:)`` and what it held.
    func releaseSession(_ session: SessionID, connection: UInt64) {
        state.withLock { Self.release(SessionKey(connection: connection, session: session), in: &$0) }
    }

    private static func release(_ key: SessionKey, in state: inout State) {
        guard let session = state.sessions.removeValue(forKey: key) else { return }
        if state.sessionsByConnection[key.connection]?.remove(key.session) != nil, state.sessionsByConnection[key.connection]?.isEmpty == true {
            state.sessionsByConnection[key.connection] = nil
        }
        state.change(session.user) {
            $0.sessions -= 1
            $0.heldObjects -= session.heldObjects
        }
    }

    /// Records that a session claims to hold `count` objects (instead of what it claimed before);
    /// false (nothing recorded) when its user's sessions would claim more than
    /// ``ServerConfiguration/Limits/heldObjectsPerUser`` together.
    func claimHeldObjects(_ count: Int, session: SessionID, connection: UInt64) -> Bool {
        state.withLock { state in
            let key = SessionKey(connection: connection, session: session)
            guard let session = state.sessions[key] else { return false }
            let (user, before) = (session.user, session.heldObjects)
            guard count <= before || state.users[user, default: UserLoad()].heldObjects - before + count <= limits.heldObjectsPerUser else {
                return false
            }
            state.sessions[key] = (user, count)
            state.change(user) { $0.heldObjects += count - before }
            return true
        }
    }

    /// Records that `connection` holds `bytes` of messages of `user` (0: none); nil when done, or
    /// the name of the limit that refuses it (the previous amount kept):
    /// ``ServerConfiguration/Limits/messageBytesInFlightPerUser`` for the user's connections
    /// together, ``ServerConfiguration/Limits/messageBytesInFlightPerAddress`` for every
    /// connection of the connection's client address.
    func holdInFlight(_ bytes: Int, user: String, connection: UInt64) -> String? {
        state.withLock { state in
            let before = state.inFlight[connection]
            let userBefore = before?.user == user ? before!.bytes : 0
            if bytes > userBefore, state.users[user, default: UserLoad()].bytesInFlight - userBefore + bytes > limits.messageBytesInFlightPerUser {
                return "messageBytesInFlightPerUser"
            }
            let addressBefore = before?.bytes ?? 0
            if bytes > addressBefore, let address = state.addressByConnection[connection],
               state.bytesInFlightByAddress[address, default: 0] - addressBefore + bytes > limits.messageBytesInFlightPerAddress {
                return "messageBytesInFlightPerAddress"
            }
            if let before { state.change(before.user) { $0.bytesInFlight -= before.bytes } }
            state.inFlight[connection] = bytes == 0 ? nil : (user, bytes)
            if bytes > 0 { state.change(user) { $0.bytesInFlight += bytes } }
            state.changeBytesInFlight(ofAddressOf: connection, by: bytes - addressBefore)
            return nil
        }
    }

    /// Open connections from `address` (for tests and metrics).
    func connections(from address: String) -> Int { state.withLock { $0.connectionsByAddress[address] ?? 0 } }

    /// Bytes of partly received messages of `user` (for tests).
    func bytesInFlight(of user: String) -> Int { state.withLock { $0.users[user]?.bytesInFlight ?? 0 } }
}
