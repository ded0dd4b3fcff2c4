import Foundation

/// Transactions and snapshot control, the only statements a `Realm` runs on its connection itself.
///
/// ```swift
/// try connection.beginWrite()      // takes the write lock, sees the newest version
/// try connection.commit()
/// ```
extension Connection {
    /// Starts a read transaction; the first read pins the snapshot it sees.
    func beginRead() throws { try execute("BEGIN DEFERRED") }

    /// Starts a write transaction, taking the write lock now.
    func beginWrite() throws { try execute("BEGIN IMMEDIATE") }

    func commit() throws { try execute("COMMIT") }

    func rollback() throws { try execute("ROLLBACK") }

    /// How much of the file SQLite reads through its memory map.
    func setMemoryMapLimit(_ bytes: Int) throws { try execute("PRAGMA mmap_size = \(bytes)") }
}
