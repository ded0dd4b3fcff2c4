import Atoll
import AtollTesting
import Foundation
import Testing

// The last API shapes an app meets, written as realm-swift's documentation writes them: typed
// sort descriptors and index(matching:), string comparisons between two properties, BSON
// partition values, the manual client reset handler's signature, the profile's fields and
// dynamic maps of optional objects.
class GapContact: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var nickname = ""
    @Persisted var age = 0
    @Persisted var friendsByCity: Map<String, GapContact?>
}

func contactsSortedByAge(_ realm: Realm) -> [String] {
    realm.objects(GapContact.self).sorted(by: [SortDescriptor(keyPath: \GapContact.age, ascending: false)]).map(\.name)
}

func handleManualReset(_ error: Error, _ session: SyncSession?) -> String {
    guard let syncError = error as? SyncError, syncError.code == .clientResetError else { return "other" }
    return session == nil ? "reset without session" : "reset"
}

final class ResetLog: @unchecked Sendable {
    static let shared = ResetLog()
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}

// Realm's ErrorReportingBlock, as a named function.
func onManualReset(_ error: Error, _ session: SyncSession?) {
    ResetLog.shared.append(handleManualReset(error, session))
}

@Suite struct APIGapsApp {
    private func realm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "gaps-\(UUID().uuidString)", objectTypes: [GapContact.self]))
    }

    @Test func typedSortIndexMatchingAndColumnStringComparisons() throws {
        let realm = try realm()
        try realm.write {
            realm.add(GapContact(value: ["name": "Samwise", "nickname": "Sam", "age": 38]))
            realm.add(GapContact(value: ["name": "Peregrin", "nickname": "Pippin", "age": 28]))
            realm.add(GapContact(value: ["name": "Meriadoc", "nickname": "meri", "age": 36]))
        }
        #expect(contactsSortedByAge(realm) == ["Samwise", "Meriadoc", "Peregrin"])
        let contacts = realm.objects(GapContact.self).sorted(byKeyPath: "name")
        #expect(contacts.index(matching: { $0.age > 30 }) == 0)
        #expect(contacts.index(matching: { $0.age > 100 }) == nil)
        #expect(contacts.where { $0.name.starts(with: $0.nickname) }.map(\.name) == ["Samwise"])
        #expect(contacts.where { $0.name.contains($0.nickname, options: .caseInsensitive) }.map(\.name) == ["Meriadoc", "Samwise"])
        #expect(contacts.where { $0.nickname.equals($0.name) }.isEmpty)
    }

    @Test func partitionValuesAsBSONAndTheManualHandlersSignature() async throws {
        try await withSyncTestServer { server in
            let user = try await server.app(device: "gaps").login(credentials: .anonymous)
            let partition: AnyBSON = .string("team-42")
            let configuration = user.configuration(partitionValue: partition)
            #expect(configuration.syncConfiguration?.partitionValue == .string("team-42"))
            #expect(user.flexibleSyncConfiguration().syncConfiguration?.partitionValue == nil)
            let manual = user.configuration(partitionValue: "p", clientResetMode: .manual(errorHandler: onManualReset))
            guard case .manual(let handler?)? = manual.syncConfiguration?.clientResetMode else {
                Issue.record("no manual handler")
                return
            }
            handler(SyncError(.clientResetError, "reset"), nil)
            #expect(ResetLog.shared.all.contains("reset without session"))
            let profile = user.profile
            #expect(profile.pictureURL == nil && profile.firstName == nil && profile.maxAge == nil)
            let data: Document = try await user.refreshCustomData()
            #expect(data.isEmpty)
        }
    }

    @Test func dynamicMapsHoldOptionalObjects() throws {
        let realm = try realm()
        let sam = GapContact(value: ["name": "Samwise"])
        try realm.write { realm.add(sam) }
        let dynamic = realm.dynamicObjects("GapContact").first!
        let byCity: Map<String, DynamicObject?> = dynamic.dynamicMap("friendsByCity")
        try realm.write { byCity["Hobbiton"] = dynamic }
        #expect(byCity["Hobbiton"]??["name"] as? String == "Samwise")
    }
}

// The version limit during development, and a proxy that keeps `Authorization` for itself.
@Suite struct VersionLimitAndAuthHeaderApp {
    @Test func aWriteThatWouldHoldTooManyVersionsFails() throws {
        var configuration = Realm.Configuration(inMemoryIdentifier: "versions-\(UUID().uuidString)", objectTypes: [GapContact.self])
        configuration.maximumNumberOfActiveVersions = 2
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(GapContact(value: ["name": "a"])) }
        var frozen: [Realm] = [realm.freeze()]
        try realm.write { realm.add(GapContact(value: ["name": "b"])) }  // frozen + new: 2
        frozen.append(realm.freeze())
        do {
            try realm.write { realm.add(GapContact(value: ["name": "c"])) }  // two frozen + new: 3
            Issue.record("the write was allowed")
        } catch let error as Realm.Error {
            #expect(error.code == .fail)
            #expect(error.localizedDescription.contains("exceeded the limit of 2"))
        }
        #expect(realm.objects(GapContact.self).count == 2)
        frozen.removeFirst()
        try realm.write { realm.add(GapContact(value: ["name": "c"])) }
        #expect(realm.objects(GapContact.self).count == 3)
        withExtendedLifetime(frozen) {}
    }

    @Test func requestsCarryTheTokenInTheNamedHeader() async throws {
        try await withSyncTestServer({ $0.authorizationHeaderName = "X-Atoll-Authorization" }) { server in
            let app = server.app(device: "proxied")
            app.syncManager.authorizationHeaderName = "X-Atoll-Authorization"
            let user = try await app.login(credentials: .anonymous)
            #expect(user.isLoggedIn)
            let key = try await user.apiKeysAuth.createAPIKey(named: "k")
            #expect(key.name == "k")
        }
    }
}

// A transport in Realm's style: a subclass that logs each request and hands it on.
final class CountingTransport: RLMNetworkTransport {
    private let lock = NSLock()
    private var urls: [String] = []
    var seen: [String] { lock.lock(); defer { lock.unlock() }; return urls }

    override func sendRequest(toServer request: RLMRequest, completion: @escaping RLMNetworkTransportCompletionBlock) {
        lock.lock(); urls.append("\(request.method) \(request.url)"); lock.unlock()
        super.sendRequest(toServer: request, completion: completion)
    }
}

@Suite struct NetworkTransportApp {
    @Test func everyAppRequestGoesThroughTheConfiguredTransport() async throws {
        try await withSyncTestServer(appId: "transport-app") { server in
            let transport = CountingTransport()
            var configuration = server.appConfiguration(device: "transport")
            configuration.transport = transport
            let app = App(id: "transport-app", configuration: configuration)
            let user = try await app.login(credentials: .anonymous)
            #expect(transport.seen.contains { $0.hasPrefix("POST ") && $0.hasSuffix("/auth/providers/anon-user/login") })
            #expect(transport.seen.contains { $0.hasPrefix("GET ") && $0.hasSuffix("/auth/profile") })
            try await user.logOut()
            #expect(transport.seen.contains { $0.hasPrefix("DELETE ") && $0.hasSuffix("/auth/session") })
        }
    }
}
