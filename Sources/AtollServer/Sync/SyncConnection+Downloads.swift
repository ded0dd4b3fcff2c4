import AtollCore
import Foundation

/// Downloads: history fanned out or read from the store, framed into download messages.
extension SyncConnection {
    /// New history fanned out by the coordinator: sent at once when it follows what the session has,
    /// read from the store when something is missing in between.
    func historyAdvanced(_ id: SessionID, _ advance: HistoryAdvance) async throws {
        guard let session = sessions[id], let record = sessionRecord(id), record.state == .identified, session.realm.id == advance.realmID else { return }
        if let view = session.flexible {
            // Kept for the catch-up, which then need not read them back from the store.
            if view.isEstablished, view.fannedOut.count + advance.entries.count <= FlexibleView.fannedOutLimit {
                sessions[id]?.flexible?.fannedOut += advance.entries.filter { $0.serverVersion > record.cursor }
            }
            return try await flexibleCatchUp(id)
        }
        if advance.entries.isEmpty {
            // Another node appended: what the session lacks is read from the store.
            guard advance.latestServerVersion > record.cursor else { return }
            do { try await catchUp(id, through: advance.latestServerVersion) } catch let close as Close { throw close } catch {
                try await storeFailed(error)
            }
            return
        }
        let fresh = advance.entries.drop { $0.serverVersion <= record.cursor }
        guard let first = fresh.first, let last = fresh.last else { return }
        if first.serverVersion == record.cursor + 1 {
            try await sendDownloads(id, Array(fresh), latest: advance.latestServerVersion)
        } else {
            do { try await catchUp(id, through: last.serverVersion) } catch let close as Close { throw close } catch {
                try await storeFailed(error)
            }
        }
    }

    /// Sends every history entry after the session's cursor up to (at least) `target`, read from the store.
    func catchUp(_ id: SessionID, through target: Int64) async throws {
        while let session = sessions[id], let cursor = sessionRecord(id)?.cursor, cursor < target {
            let entries = try await coordinator.history(realmID: session.realm.id, after: cursor, maxBytes: Self.downloadMessageBytes)
            guard let last = entries.last else { return }
            try await sendDownloads(id, entries, latest: max(target, last.serverVersion))
        }
    }

    /// Sends `entries` (which follow the session's cursor) in download messages of about
    /// ``downloadMessageBytes`` each. The client's own changesets are included: they are its
    /// acknowledgement (docs/merge.md).
    func sendDownloads(_ id: SessionID, _ entries: [HistoryEntry], latest: Int64) async throws {
        guard let session = sessions[id], let record = sessionRecord(id) else { return }
        var cursor = record.cursor
        var lastOwn = record.lastOwnClientVersion
        // Partition-based sync: the fields the partition rule's field permissions hide never leave
        // the server (the client's own changes come back whole: it has them).
        let access = session.flexible == nil ? session.rules.first(where: { $0.type == nil })?.fields : nil
        var schema: [String: ObjectSchema] = [:]
        if access != nil {
            // The types of hidden fields, to put them back to their defaults (Permissions.hiding):
            // the realm's tracked schema, not its whole state.
            do { schema = try await coordinator.currentSchema(of: session.realm).types } catch { try await storeFailed(error) }
        }
        var changesets: [DownloadChangeset] = []
        var bytes = 0
        func flush() async throws {
            guard !changesets.isEmpty else { return }
            let remaining = latest - cursor
            let average = bytes / changesets.count
            try await send(.download(Download(
                session: id, epoch: session.realm.epoch, changesets: changesets,
                progress: DownloadProgress(
                    serverVersion: cursor, latestServerVersion: max(latest, cursor),
                    downloadableBytes: UInt64(max(0, remaining) * Int64(average))))))
            metrics.downloads.increment(by: Int64(changesets.count))
            changesets = []
            bytes = 0
        }
        for var entry in entries where entry.serverVersion > cursor {
            if let access, entry.changeset.fileIdent != record.file.ident {
                // A changed changeset drops the shared bytes (HistoryEntry.changeset): this session's
                // are encoded from what its rules let it read. An unchanged one keeps them.
                let visible = Permissions.hiding(access, in: entry.changeset.instructions, schema: schema)
                if visible != entry.changeset.instructions { entry.changeset.instructions = visible }
            }
            // The entry's bytes as the store wrote them, shared by every session that gets it whole.
            let encoded = entry.encoded
            let size = encoded.count
            if !changesets.isEmpty && bytes + size > Self.downloadMessageBytes { try await flush() }
            changesets.append(DownloadChangeset(
                serverVersion: entry.serverVersion, originFileIdent: entry.changeset.fileIdent,
                originTimestamp: entry.changeset.timestamp, lastClientVersion: lastOwn,
                changeset: entry.changeset, encodedChangeset: encoded))
            bytes += size
            if entry.changeset.fileIdent == record.file.ident {
                lastOwn = max(lastOwn, entry.changeset.version)
            }
            cursor = entry.serverVersion
        }
        try await flush()
        logic.update(id) { $0.delivered(cursor, ownClientVersion: lastOwn) }
        await seen(id)
    }

    /// The store failed: the client retries later on a new connection.
    func storeFailed(_ error: any Error) async throws -> Never {
        logger.error("sync store failure", metadata: ["error": "\(error)"])
        try? await send(.error(ErrorMessage(
            code: .tryAgainLater, message: "the server could not reach its store; try again later", tryAgainAfterMilliseconds: 1000)))
        try? await flush()
        throw Close()
    }
}
