import AtollCore
import Foundation

/// An insert-only object type for data ingest (sensor readings, events, logs): created with
/// `realm.create(_:value:)` in a flexible-sync realm, uploaded, and removed from the device once
/// the server acknowledged it. It cannot be queried, read back, changed or deleted, nothing links
/// to it, and no subscription can select it: the server keeps it and never downloads it.
/// It needs a primary key, and may hold embedded objects only.
///
/// ```swift
/// class SensorReading: AsymmetricObject {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var celsius: Double
/// }
/// try realm.write { realm.create(SensorReading.self, value: ["_id": ObjectId.generate(), "celsius": 21.5]) }
/// ```
open class AsymmetricObject: ObjectBase {
    public required init() { super.init() }
}

extension Realm {
    /// Creates an asymmetric object from a dictionary, an array or another object. It is uploaded
    /// with the write and removed from the realm once the server has it; nothing reads it back.
    ///
    /// ```swift
    /// realm.create(SensorReading.self, value: ["_id": ObjectId.generate(), "celsius": 21.5])
    /// ```
    public func create<T: AsymmetricObject>(_ type: T.Type, value: Any = [String: Any]()) {
        guard let transaction = requireWrite("create objects") else { return }
        guard configuration.syncConfiguration?.enableFlexibleSync == true else {
            transaction.fail(Error(.fail, "'\(type.className())' is asymmetric: its objects can only be created in a flexible-sync realm"))
            return
        }
        let object = T()
        do {
            try ClassInfo.of(type).assign(value, to: object)
        } catch let error as Error {
            transaction.fail(error)
            return
        } catch {
            transaction.fail(Error(.invalidValue, "\(error)"))
            return
        }
        perform(transaction) { _ = try addObject(object, update: .error, transaction) }
    }

    /// Asymmetric types need flexible sync, as in Realm: a local realm or a partition's realm
    /// with one cannot open.
    func checkAsymmetricTypes() throws {
        guard configuration.syncConfiguration?.enableFlexibleSync != true,
              let table = coordinator.allTables.first(where: \.schema.isAsymmetric) else { return }
        let where_ = configuration.syncConfiguration == nil ? "a local realm" : "partition-based sync"
        throw Error(.fail, "asymmetric type '\(table.name)' is not allowed in \(where_): open it in a flexible-sync realm")
    }

    /// The engine, once the server acknowledged uploads: the asymmetric objects leave the realm
    /// (their creation stays in the history, which is what uploads read). The removal is not
    /// recorded: it is nothing the server should hear of.
    func removeAsymmetricObjects() throws {
        let tables = coordinator.allTables.filter(\.schema.isAsymmetric)
        guard !tables.isEmpty else { return }
        refresh()
        guard tables.contains(where: { !dynamicObjects($0.name).isEmpty }) else { return }
        try beginWriteTransaction()
        do {
            for table in tables { delete(dynamicObjects(table.name)) }
            try commitWrite(recordingHistory: false)
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
    }
}
