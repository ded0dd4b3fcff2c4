import AtollCore
import Foundation

extension Realm {
    /// The recorded changesets, oldest first (the local sync history).
    @_spi(Testing)
    public func historyChangesets() throws -> [Changeset] {
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
