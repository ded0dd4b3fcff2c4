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
// unmanaged collection is not observed.

extension Results: Observable {}
extension List: Observable {}
extension MutableSet: Observable {}
extension Map: Observable {}
extension LinkingObjects: Observable {}
extension AnyRealmCollection: Observable {}
extension SectionedResults: Observable {}
extension ResultsSection: Observable {}
extension ProjectedCollection: Observable {}

extension Realm {
    /// Registers a read of the contents of list, set or map property `index` of a managed object.
    func observeCollection(_ state: _ManagedObjectState, _ index: Int) {
        guard let observations else { return }
        (state.observation?.collections[index] ?? observations.collection(state, index)).access()
    }
}
