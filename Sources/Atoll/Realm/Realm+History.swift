import AtollCore
import Foundation

extension Realm {
    /// The recorded changesets, oldest first (the local sync history).
    package func historyChangesets() throws -> [Changeset] {
        verifyThread()
        return try historyRecords(after: 0)
    }

    /// The history records after a version, oldest first; a record that does not decode is a
    /// damaged file. Every reader of `_atoll_history` goes through here.
    func historyRecords(after version: Int64) throws -> [Changeset] {
        try history.records(after: version).map { record in
            guard let data = record else {
                throw Error(.invalidDatabase, "a history record of \(coordinator.path) is not a changeset")
            }
            do {
                return try Changeset(decoding: data)
            } catch {
                throw Error(.invalidDatabase, "a history record of \(coordinator.path) is damaged: \(error)", underlying: error)
            }
        }
    }
}

extension Realm {
    /// Tests only: how many times the log of the realm file at `configuration`'s path was synced
    /// to disk before something that depends on its commits left the device.
    @_spi(Testing)
    public static func logSyncCountForTesting(_ configuration: Configuration) -> Int {
        guard let url = configuration.fileURL else { return 0 }
        return RealmFiles.logSyncCount(url.standardizedFileURL.path)
    }

    /// Tests only: the next `count` syncs of the log of `configuration`'s file fail, as they would
    /// on a full disk or an I/O error.
    @_spi(Testing)
    public static func failLogSyncsForTesting(_ configuration: Configuration, count: Int) {
        guard let url = configuration.fileURL else { return }
        RealmFiles.failLogSyncs(url.standardizedFileURL.path, count: count)
    }

    /// Tests only: whether any `Realm` of `configuration`'s file is open in this process (its
    /// files may be copied or replaced once none is).
    @_spi(Testing)
    public static func isOpenForTesting(_ configuration: Configuration) -> Bool {
        RealmCoordinator.isOpen(configuration)
    }
}
