// Atoll's SwiftUI wrappers, driven on Linux through the SwiftUI stand-in: what a view's
// @ObservedResults, @ObservedRealmObject, @StateRealmObject, bindings and searchable do to the
// realm. (On Apple platforms this target compiles nothing: Atoll has the wrappers.)
#if ATOLL_SWIFTUI_STAND_IN
import Atoll
import AtollSwiftUIStandIn
import AtollTesting
import Foundation
import OpenCombine
import Testing

final class ShellItem: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var group = ""
    @Persisted var done = false
    @Persisted var tags: List<String>
    @Persisted var children: List<ShellChild>
}

final class ShellChild: Object, ObjectKeyIdentifiable {
    @Persisted var title = ""
}

/// A view in Realm's style; compiling it is half the test.
struct ShellItemsView: View {
    @ObservedResults(ShellItem.self, sortDescriptor: Atoll.SortDescriptor(keyPath: "name")) var items
    @State var searchText = ""

    var body: some View {
        EmptyView().searchable(text: $searchText, collection: $items, keyPath: \.name)
    }
}

struct ShellItemRow: View {
    @ObservedRealmObject var item: ShellItem
    var body: some View { EmptyView() }
}

@MainActor @Suite(.serialized) struct SwiftUIShellTests {
    private func configuration(_ folder: TemporaryFolder) -> Realm.Configuration {
        folder.configuration(objectTypes: [ShellItem.self, ShellChild.self])
    }

    @Test func observedResultsOpenTheEnvironmentsRealmAndEditItInWrites() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        EnvironmentValues.current.realmConfiguration = configuration(folder)
        let items = ObservedResults(ShellItem.self, sortDescriptor: Atoll.SortDescriptor(keyPath: "name"))
        items.update()
        #expect(items.wrappedValue.isEmpty)
        #expect(items.wrappedValue.isFrozen, "the view reads a frozen snapshot")
        items.projectedValue.append(ShellItem(value: ["name": "b"]))
        items.projectedValue.append(ShellItem(value: ["name": "a"]))
        #expect(items.wrappedValue.map(\.name) == ["a", "b"])
        items.projectedValue.remove(atOffsets: IndexSet(integer: 0))
        #expect(items.wrappedValue.map(\.name) == ["b"])
        let b = try #require(items.wrappedValue.first)
        items.projectedValue.remove(b)
        #expect(items.wrappedValue.isEmpty)
        let realm = try Realm(configuration: configuration(folder))
        #expect(realm.objects(ShellItem.self).isEmpty)
    }

    @Test func whereSortAndSearchChangeTheResults() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: configuration(folder))
        try realm.write {
            for (name, done) in [("apple", true), ("banana", false), ("cherry", true)] {
                realm.add(ShellItem(value: ["name": name, "done": done]))
            }
        }
        EnvironmentValues.current.realm = realm
        let done = ObservedResults(ShellItem.self, where: { $0.done == true }, sortDescriptor: Atoll.SortDescriptor(keyPath: "name", ascending: false))
        done.update()
        #expect(done.wrappedValue.map(\.name) == ["cherry", "apple"])
        done.projectedValue.sortDescriptor = Atoll.SortDescriptor(keyPath: "name")
        #expect(done.wrappedValue.map(\.name) == ["apple", "cherry"])
        done.projectedValue.where = { $0.done == false }
        #expect(done.wrappedValue.map(\.name) == ["banana"])

        let view = ShellItemsView()
        _updateDynamicProperties(of: view)
        _ = view.searchable(text: .constant("an"), collection: view.$items, keyPath: \.name)
        #expect(view.items.map(\.name) == ["banana"])
        _ = view.searchable(text: .constant(""), collection: view.$items, keyPath: \.name)
        #expect(view.items.map(\.name) == ["apple", "banana", "cherry"])
    }

    @Test func observedRealmObjectBindingsWriteInTransactionsAndDeleteLeavesADefault() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: configuration(folder))
        let item = ShellItem(value: ["name": "a"])
        try realm.write { realm.add(item) }
        let row = ShellItemRow(item: item.freeze())
        #expect(row.item.isFrozen)
        row.$item.name.wrappedValue = "renamed"
        #expect(!realm.isInWriteTransaction)
        realm.refresh()
        #expect(item.name == "renamed")
        row.$item.done.wrappedValue = true
        realm.refresh()
        #expect(item.done)
        #expect(row.$item.tags.wrappedValue.isFrozen, "a list binding hands a frozen list")
        row.$item.tags.append("t")
        realm.refresh()
        #expect(Array(item.tags) == ["t"])
        row.$item.delete()
        realm.refresh()
        #expect(realm.objects(ShellItem.self).isEmpty)
        #expect(row.item.name == "", "a deleted object reads as a new one")
    }

    @Test func stateRealmObjectOfANewObjectThenAddedThroughResults() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        EnvironmentValues.current.realmConfiguration = configuration(folder)
        let state = StateRealmObject(wrappedValue: ShellItem())
        var signals = 0
        let cancellable = state._publisher.sink(receiveCompletion: { _ in }, receiveValue: { _ in signals += 1 })
        state.projectedValue.name.wrappedValue = "draft"
        #expect(state.wrappedValue.name == "draft")
        #expect(signals == 1, "an unmanaged object's binding write is signalled")
        let items = ObservedResults(ShellItem.self)
        items.update()
        items.projectedValue.append(state.wrappedValue)
        #expect(items.wrappedValue.map(\.name) == ["draft"])
        cancellable.cancel()
    }

    @Test func sectionedResultsByKeyPath() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: configuration(folder))
        try realm.write {
            for (name, group) in [("a1", "a"), ("b1", "b"), ("a2", "a")] { realm.add(ShellItem(value: ["name": name, "group": group])) }
        }
        EnvironmentValues.current.realm = realm
        let sections = ObservedSectionedResults(ShellItem.self, sectionKeyPath: \.group, sortDescriptors: [Atoll.SortDescriptor(keyPath: "name")])
        sections.update()
        #expect(sections.wrappedValue.map(\.key) == ["a", "b"])
        #expect(sections.wrappedValue[0].map(\.name) == ["a1", "a2"])
        sections.remove(atOffsets: IndexSet(integer: 0), section: sections.wrappedValue[0])
        #expect(sections.wrappedValue[0].map(\.name) == ["a2"])
    }
}
#endif
