@testable import AtollCore
import Foundation

/// An in-memory sync world for the convergence fuzzer: a server (history and state), 3–5
/// clients, and a network that delays, duplicates, reorders and drops messages.
struct MergeFuzzSimulation {
    struct Client {
        var merger: ClientMerger
        var state = ReplicaState()
        var connected = true
        var nextVersion: Int64 = 1
        var clockSkew: Int64
    }

    enum Message {
        case upload(Int, UploadBatch)
        case download(Int, [HistoryEntry])
        /// An upload from the hostile client, which never downloads and writes garbage.
        case hostileUpload(UploadBatch)
    }

    /// The limits the simulated server validates with: small, so the fuzzer can write values over them.
    static let limits = ChangesetLimits(maximumValueSize: 64, maximumCollectionCount: 1_000)
    /// The hostile client's file ident.
    static let hostileFile: Int64 = 99
    var hostileVersion: Int64 = 1
    /// Hostile uploads the server refused, and those it integrated (their hostile parts dropped by
    /// the merge, or harmless by chance).
    var hostileRefused = 0
    var hostileIntegrated = 0

    let seed: UInt64
    var generator: MergeFuzzGenerator
    var clients: [Client] = []
    var history = ServerHistory()
    var serverState = ReplicaState()
    var network: [Message] = []
    var clock: Int64 = 1_000
    /// What happened, in order, for a reproduction.
    var log: [String] = []
    let logging: Bool

    init(seed: UInt64, logging: Bool = false) {
        self.seed = seed
        self.logging = logging
        generator = MergeFuzzGenerator(rng: SplitMix64(seed: seed))
        let count = generator.int(3...5)
        for i in 0..<count {
            clients.append(Client(merger: ClientMerger(fileIdent: Int64(i + 1)), clockSkew: Int64(generator.int(-4...4))))
            // Every client declares the schema offline: concurrent addTables merge.
            commit(MergeFixture.schemaInstructions, index: i)
        }
    }

    private mutating func commit(_ instructions: [Instruction], index: Int) {
        var client = clients[index]
        defer { clients[index] = client }
        clock += Int64(generator.int(0...3))
        let changeset = Changeset(version: client.nextVersion, timestamp: clock + client.clockSkew,
                                  fileIdent: client.merger.fileIdent, instructions: instructions)
        client.nextVersion += 1
        client.state.apply(changeset)
        client.merger.recordLocal(changeset)
        if logging { log.append("client \(index) commits v\(changeset.version) t\(changeset.timestamp): \(instructions)") }
    }

    /// Runs `steps` random events.
    mutating func run(steps: Int) throws(MergeError) {
        for _ in 0..<steps {
            let c = generator.int(0...(clients.count - 1))
            switch generator.int(0...99) {
            case 0..<40:
                var scratch = clients[c].state
                let instructions = generator.transaction(on: &scratch)
                if !instructions.isEmpty { commit(instructions, index: c) }
            case 40..<52:
                guard clients[c].connected, let batch = clients[c].merger.upload() else { continue }
                network.append(.upload(c, batch))
                if logging { log.append("client \(c) sends upload base \(batch.baseServerVersion) versions \(batch.changesets.map(\.version))") }
            case 52..<64:
                guard clients[c].connected else { continue }
                let entries = Array(history.entries(after: clients[c].merger.serverVersion))
                network.append(.download(c, entries))
                if logging { log.append("server sends client \(c) versions \(entries.map(\.serverVersion))") }
            case 64..<90:
                guard !network.isEmpty else { continue }
                let i = generator.int(0...(network.count - 1))
                let message = generator.chance(0.15) ? network[i] : network.remove(at: i)   // duplicated or delivered
                try deliver(message)
            case 90..<93:
                let instructions = generator.hostileTransaction(on: serverState)
                let batch = UploadBatch(fileIdent: Self.hostileFile,
                                        baseServerVersion: Int64(generator.int(0...Int(history.version))),
                                        changesets: [Changeset(version: hostileVersion, timestamp: clock, instructions: instructions)])
                hostileVersion += 1
                network.append(.hostileUpload(batch))
                if logging { log.append("hostile client sends base \(batch.baseServerVersion) v\(batch.changesets[0].version): \(instructions)") }
            case 93..<95:
                clients[c].connected = false
                // Messages of the broken connection are lost, except some that arrive late.
                var kept: [Message] = []
                for message in network {
                    switch message {
                    case .upload(let i, _), .download(let i, _):
                        if i != c || generator.chance(0.3) { kept.append(message) }
                    case .hostileUpload:
                        kept.append(message)
                    }
                }
                network = kept
                if logging { log.append("client \(c) disconnects") }
            default:
                clients[c].connected = true
                if logging { log.append("client \(c) reconnects") }
            }
        }
    }

    mutating func deliver(_ message: Message) throws(MergeError) {
        switch message {
        case .upload(let c, let batch):
            // An honest upload must never be refused: errors fail the schedule.
            let appended = try integrate(batch)
            for entry in appended { serverState.apply(entry.changeset) }
            if logging { log.append("server integrates upload of client \(c) (base \(batch.baseServerVersion), versions \(batch.changesets.map(\.version))) as \(appended.map(\.serverVersion))") }
        case .hostileUpload(let batch):
            do {
                let appended = try integrate(batch)
                for entry in appended { serverState.apply(entry.changeset) }
                hostileIntegrated += 1
                if logging { log.append("server integrates the hostile upload v\(batch.changesets[0].version) as \(appended.map(\.serverVersion))") }
            } catch {
                hostileRefused += 1
                if logging { log.append("server refuses the hostile upload v\(batch.changesets[0].version): \(error)") }
            }
        case .download(let c, let entries):
            let toApply = clients[c].merger.receive(entries)
            clients[c].state.apply(toApply)
            if logging { log.append("client \(c) receives \(entries.map(\.serverVersion)), now at \(clients[c].merger.serverVersion), applies \(toApply.map(\.instructions))") }
        }
    }

    /// What the server does with an upload: rebase it, validate the result against its state (schema
    /// and structure), then append it — or refuse it whole, leaving history unchanged.
    mutating func integrate(_ batch: UploadBatch) throws(MergeError) -> [HistoryEntry] {
        var next = history
        let appended = try next.integrate(batch)
        try serverState.validate(appended.map(\.changeset), limits: Self.limits)
        history = next
        return appended
    }

    /// Reconnects everyone, delivers what is still in flight, then syncs until nothing is pending.
    mutating func quiesce() throws(MergeError) {
        for i in clients.indices { clients[i].connected = true }
        while !network.isEmpty {
            try deliver(network.remove(at: generator.int(0...(network.count - 1))))
        }
        for _ in 0..<4 {
            for c in clients.indices {
                if let batch = clients[c].merger.upload() { try deliver(.upload(c, batch)) }
            }
            for c in clients.indices {
                try deliver(.download(c, Array(history.entries(after: clients[c].merger.serverVersion))))
            }
            if clients.allSatisfy({ $0.merger.pending.isEmpty }) { return }
        }
    }

    var isQuiescent: Bool {
        clients.allSatisfy { $0.merger.pending.isEmpty && $0.merger.serverVersion == history.version }
    }
}
