import Atoll
import AtollTesting
import Foundation
import Testing

// A contacts app in Realm's style: inverse relationships, generic collection code, sections.
class Contact: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var favourite = false
    @Persisted var groups: List<ContactGroup>
    var firstLetter: String { String(name.prefix(1)).uppercased() }
}

class ContactGroup: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted(originProperty: "groups") var members: LinkingObjects<Contact>
}

final class ContactListModel {
    private(set) var contacts: AnyRealmCollection<Contact>
    private var token: NotificationToken?
    private(set) var reloads = 0

    init(_ contacts: AnyRealmCollection<Contact>) {
        self.contacts = contacts
        token = contacts.observe { [weak self] changes in
            switch changes {
            case .initial, .update: self?.reloads += 1
            case .error(let error): fatalError("\(error)")
            }
        }
    }

    func show<C: RealmCollection>(_ collection: C) where C.Element == Contact {
        contacts = AnyRealmCollection(collection)
    }
}

@Suite struct ContactsApp {
    @Test func contactsAreGroupedSectionedAndObserved() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: [Contact.self, ContactGroup.self]))
        try realm.write {
            let family = ContactGroup(value: ["title": "Family"])
            let work = ContactGroup(value: ["title": "Work"])
            for (name, groups) in [("anna", [family]), ("Ben", [work]), ("Alex", [family, work]), ("carl", [])] {
                let contact = Contact()
                contact.name = name
                contact.groups.append(objectsIn: groups)
                realm.add(contact)
            }
        }
        let family = realm.objects(ContactGroup.self).filter("title == %@", "Family").first!
        XCTAssertEqualish(family.members.sorted(byKeyPath: "name").map { $0.name }, ["Alex", "anna"])

        let model = ContactListModel(AnyRealmCollection(realm.objects(Contact.self)))
        #expect(model.contacts.count == 4)
        model.show(family.members)
        #expect(model.contacts.count == 2)

        let sections = realm.objects(Contact.self).sectioned(by: { $0.firstLetter }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        #expect(sections.allKeys == ["A", "B", "C"])
        #expect(sections[0].map { $0.name } == ["Alex", "anna"])

        try realm.write { realm.add(Contact(value: ["name": "Dora"])) }
        #expect(model.reloads == 2)
    }
}

private func XCTAssertEqualish<T: Equatable>(_ a: T, _ b: T) { #expect(a == b) }
