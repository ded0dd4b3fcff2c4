import Observation

// Collections take part in Swift Observation as objects do (Observation+Objects.swift): a read of
// a managed collection (its count, an element, an iteration, a lookup) registers its contents;
// the realm fires them once it advances past a change that concerns them. The check is cheap, so
// it errs on the side of firing (never re-running a query):
//
// - `Results`, `LinkingObjects`, `SectionedResults` and `ResultsSection`: any insertion, deletion
//   or modification in the objects' table or a table they link to or embed; for the results of a
//   list's or set's query, a change of that list or set too.
// - `List`, `MutableSet`, `Map`: a change of the property in its owner, the owner's deletion, and
//   for objects, a modification or deletion of an object of their type (which an aggregate such
//   as `sum(ofProperty:)` reads).
//
// `AnyRealmCollection` and `ProjectedCollection` read through the collection they wrap. The
// registration lasts while something holds the collection (as for any observable instance); an
// unmanaged collection is not observed. Observation needs macOS 14 / iOS 17 / tvOS 17 / watchOS 10
// (`Registrar`).

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension Results: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension List: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension MutableSet: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension Map: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension LinkingObjects: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension AnyRealmCollection: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension SectionedResults: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension ResultsSection: Observable {}
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension ProjectedCollection: Observable {}

extension Realm {
    /// Registers a read of the contents of list, set or map property `index` of a managed object.
    func observeCollection(_ state: _ManagedObjectState, _ index: Int) {
        guard let observations else { return }
        (state.observation?.collections[index] ?? observations.collection(state, index)).access()
    }
}
