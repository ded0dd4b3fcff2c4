import Observation

// Objects take part in Swift Observation (`withObservationTracking`, SwiftUI on iOS 17+/macOS 14+;
// on older systems, where Observation does not exist, they take no part: `Registrar`)
// with no property wrapper of their own: `@Persisted`'s getter registers the read.
//
// - An unmanaged object is a plain observable object: a read registers the property with the
//   object's own registrar (made by the first read), a write fires it.
// - A managed object's read registers the property with the registrar of its row in its realm
//   (`RowObservation`, shared by the row's accessors). Writes fire nothing by themselves; the realm
//   fires the changed properties once it advances past the commit, whichever thread, process or
//   sync download made it (`ObservationRegistry.deliver`), on the realm's own isolation.

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension ObjectBase: Observable {}

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension Projection: Observable {}

/// The registrar of an unmanaged object.
@usableFromInline
final class _UnmanagedObservation {
    let registrar = Registrar()
}

/// Registers a read of an unmanaged object's property.
@usableFromInline
func _atollObserveRead<Object: ObjectBase, Value>(_ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>) {
    let observation: _UnmanagedObservation
    if let existing = object._atollObservation {
        observation = existing
    } else {
        observation = _UnmanagedObservation()
        object._atollObservation = observation
    }
    if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) { observation.registrar.base.access(object, keyPath: keyPath) }
}

/// Registers a read of property `index` of a managed object with its row's registrar, and
/// records, once per class and property, how to fire the property with its typed key path.
@usableFromInline
func _atollObserveRead<Object: ObjectBase, Value>(_ object: Object, _ state: _ManagedObjectState, _ index: Int,
                                                  _ keyPath: ReferenceWritableKeyPath<Object, Value>) {
    // Frozen realms never change, and have no registry.
    guard let row = state.observation ?? state.realm.observations?.row(for: state) else { return }
    if #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *) { row.registrar.base.access(object, keyPath: keyPath) }
    guard let info = state.table.classInfo, !info.hasFirer(index) else { return }
    // A key path is an immutable value; the standard library only leaves it unmarked.
    nonisolated(unsafe) let keyPath = keyPath
    info.recordFirer(index) {
        { registrar, subject in
            guard #available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *), let subject = subject as? Object else { return }
            registrar.base.willSet(subject, keyPath: keyPath)
            registrar.base.didSet(subject, keyPath: keyPath)
        }
    }
}
