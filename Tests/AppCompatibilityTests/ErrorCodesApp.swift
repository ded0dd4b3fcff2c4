import Atoll
import Foundation
import Testing

// Error handling as Realm apps write it: a sync error handler that switches over every code
// realm-swift declares (including the deprecated underlyingAuthError) and reads serverLogURL,
// and an API key screen reading `disabled`.

func describeSyncError(_ error: SyncError) -> String {
    var text: String
    switch error.code {
    case .clientResetError: text = "reset"
    case .clientSessionError: text = "session"
    case .clientUserError, .underlyingAuthError: text = "user"
    case .clientInternalError: text = "internal"
    case .permissionDeniedError: text = "permission"
    case .invalidFlexibleSyncSubscriptions: text = "subscriptions"
    case .writeRejected: text = "rejected"
    default: text = "other"
    }
    if let url = error.serverLogURL {
        text += " (see \(url))"
    }
    return text
}

func apiKeyRow(_ key: UserAPIKey) -> String {
    "\(key.name)\(key.disabled ? " (disabled)" : "")"
}

@Suite struct ErrorCodesApp {
    @Test func aHandlerOverEveryRealmCodeCompilesAndRuns() {
        #expect(describeSyncError(SyncError(.underlyingAuthError, "token refused")) == "user")
        #expect(describeSyncError(SyncError(.clientResetError, "reset needed")) == "reset")
        #expect(SyncError.Code.underlyingAuthError.rawValue == 8)
    }
}

// A status line over every session state realm-swift declares: an exhaustive switch, no default.
func sessionStatus(_ session: SyncSession) -> String {
    switch session.state {
    case .active: return "syncing"
    case .inactive: return "paused"
    case .invalid: return "stopped"
    }
}

// A model in the older style: the primary key named by overriding primaryKey().
class LegacyKeyedNote: Object {
    @Persisted var noteId = 0
    @Persisted var text = ""
    override class func primaryKey() -> String? { "noteId" }
}

@Suite struct LegacyPrimaryKeyApp {
    @Test func anOverriddenPrimaryKeyIsThePrimaryKey() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "legacy-key-\(UUID().uuidString)",
                                                                 objectTypes: [LegacyKeyedNote.self]))
        try realm.write {
            realm.add(LegacyKeyedNote(value: ["noteId": 7, "text": "first"]))
            realm.add(LegacyKeyedNote(value: ["noteId": 7, "text": "second"]), update: .modified)
        }
        #expect(realm.objects(LegacyKeyedNote.self).count == 1)
        #expect(realm.object(ofType: LegacyKeyedNote.self, forPrimaryKey: 7)?.text == "second")
        #expect(realm.schema["LegacyKeyedNote"]?.primaryKeyProperty?.name == "noteId")
        #expect(LegacyKeyedNote.primaryKey() == "noteId")
    }
}

// Realm's catch patterns over error codes.
func loginMessage(_ body: () throws -> Void) -> String {
    do {
        try body()
        return "ok"
    } catch AppError.invalidPassword {
        return "wrong password"
    } catch SyncError.clientResetError {
        return "reset"
    } catch Realm.Error.fileNotFound {
        return "no file"
    } catch {
        return "other"
    }
}

@Suite struct CatchPatternsApp {
    @Test func codesMatchInCatchClauses() {
        #expect(loginMessage { throw AppError(.invalidPassword, "invalid username/password") } == "wrong password")
        #expect(loginMessage { throw SyncError(.clientResetError, "reset") } == "reset")
        #expect(loginMessage { throw Realm.Error(.fileNotFound, "gone") } == "no file")
        #expect(loginMessage { throw AppError(.accountNameInUse, "name already in use") } == "other")
    }
}

// List editing as Swift's collections do it (realm-swift's List has these).
class ChecklistItemList: Object {
    @Persisted var items: List<String>
}

@Suite struct ListEditingApp {
    @Test func rangeEditsOnAManagedList() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "list-edits-\(UUID().uuidString)",
                                                                 objectTypes: [ChecklistItemList.self]))
        let list = ChecklistItemList()
        try realm.write {
            realm.add(list)
            list.items.append(objectsIn: ["a", "b", "c", "d", "e"])
            list.items.insert(contentsOf: ["x", "y"], at: 1)
        }
        #expect(Array(list.items) == ["a", "x", "y", "b", "c", "d", "e"])
        try realm.write {
            list.items.replaceSubrange(1..<3, with: ["z"])
            list.items.removeFirst(1)
            list.items.removeLast(2)
        }
        #expect(Array(list.items) == ["z", "b", "c"])
        try realm.write { list.items.removeSubrange(0..<2) }
        #expect(Array(list.items) == ["c"])
    }
}

// Iterating a Map as realm-swift does: SingleMapEntry values, or key/value tuples on request.
class Scoreboard: Object {
    @Persisted var scores: Map<String, Int>
}

@Suite struct MapIterationApp {
    @Test func entriesAndKeyValueSequence() throws {
        let board = Scoreboard()
        board.scores["ann"] = 3
        board.scores["bo"] = 5
        var total = 0
        for entry in board.scores {
            let single: SingleMapEntry<String, Int> = entry
            total += single.value
        }
        #expect(total == 8)
        let dictionary = Dictionary(uniqueKeysWithValues: board.scores.asKeyValueSequence().map { ($0.key, $0.value) })
        #expect(dictionary == ["ann": 3, "bo": 5])
        for (key, value) in board.scores.asKeyValueSequence() { #expect(board.scores[key] == value) }
    }
}
