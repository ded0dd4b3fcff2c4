import Atoll
import AtollTesting
import Foundation
import Testing

/// `Realm.Error` is caught and read as realm-swift's is.
@Suite struct RealmErrorShapeTests {
    @Test func codesHaveRealmSwiftsRawValues() {
        let expected: [(Realm.Error.Code, Int)] = [
            (.fail, 1), (.fileAccess, 2), (.filePermissionDenied, 3), (.fileExists, 4), (.fileNotFound, 5),
            (.fileFormatUpgradeRequired, 6), (.incompatibleLockFile, 8), (.addressSpaceExhausted, 9),
            (.schemaMismatch, 10), (.alreadyOpen, 12), (.invalidInput, 13), (.outOfDiskSpace, 14),
            (.incompatibleSession, 15), (.unsupportedFileFormatVersion, 16), (.multipleSyncAgents, 17),
            (.subscriptionFailed, 18), (.fileOperationFailed, 19), (.invalidDatabase, 20),
            (.incompatibleHistories, 21), (.noSubscriptionForWrite, 22),
        ]
        for (code, raw) in expected {
            #expect(code.rawValue == raw, "\(code)")
            #expect(Realm.Error.Code(rawValue: raw) == code)
        }
        // Atoll's own codes stay clear of realm-swift's.
        let atollOnly: [Realm.Error.Code] = [.wrongThread, .alreadyInWriteTransaction, .notInWriteTransaction, .readOnly,
                                             .invalidQuery, .invalidValue, .primaryKeyExists, .objectInvalidated,
                                             .wrongRealm, .invalidSchema, .invalidConfiguration]
        #expect(atollOnly.allSatisfy { $0.rawValue > 100 })
    }

    @Test func aCatchClauseMatchesTheCodeAndNothingElse() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var configuration = folder.configuration("missing.realm", objectTypes: [Dog.self])
        configuration.readOnly = true
        var caught: String?
        do {
            _ = try Realm(configuration: configuration)
        } catch Realm.Error.fileExists {
            caught = "fileExists"
        } catch Realm.Error.fileNotFound {
            caught = "fileNotFound"
        } catch {
            caught = "other: \(error)"
        }
        #expect(caught == "fileNotFound")
        #expect(!(Realm.Error.fileNotFound ~= (CocoaError(.fileNoSuchFile) as any Error)), "another error type never matches")
    }

    @Test func aSwitchOverTheCodeReadsAsInRealmSwift() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        let realm = try t.open()
        let destination = t.folder.url.appendingPathComponent("copy.realm")
        try realm.writeCopy(toFile: destination)
        let error = try #require(throws: Realm.Error.self) { try realm.writeCopy(toFile: destination) }
        let outcome: String = switch error.code {
        case .fileExists: "exists"
        case .fileNotFound: "missing"
        default: "other"
        }
        #expect(outcome == "exists")
        #expect(error.code == Realm.Error.fileExists)
    }

    @Test func anErrorReadsAsAnNSErrorOfRealmsDomain() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        do { _ = try t.open() }
        let error = try #require(throws: Realm.Error.self) { try Realm(configuration: t.configuration).writeCopy(toFile: t.configuration.fileURL!) }
        #expect(error.fileURL?.path == t.configuration.fileURL!.standardizedFileURL.path)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == error.fileURL?.path)
        #expect(error.userInfo[NSLocalizedDescriptionKey] as? String == error.message)
        let nsError = error as NSError
        #expect(nsError.domain == "io.realm")
        #expect(nsError.code == 4)
        #expect((error as any Error).localizedDescription == error.message)
        #expect(Realm.Error.errorDomain == "io.realm" && error.errorCode == 4)
    }

    @Test func realmSwiftsInitializerAndCallFailed() {
        let error = Realm.Error(.fileAccess, userInfo: [NSLocalizedDescriptionKey: "disk on fire", NSFilePathErrorKey: "/tmp/x.realm"])
        #expect(error.code == .fileAccess)
        #expect(error.localizedDescription == "disk on fire")
        #expect(error.fileURL == URL(fileURLWithPath: "/tmp/x.realm"))
        #expect(Realm.Error(.fail).fileURL == nil)
        #expect(Realm.Error.callFailed.code == .fail)
        #expect(Realm.Error.callFailed.localizedDescription == "Call failed")
    }

    @Test func aSchemaChangeWithoutAHigherVersionIsCaughtAsSchemaMismatch() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do { _ = try Realm(configuration: folder.configuration(objectTypes: [MemberV1.self])) }
        var caught = false
        do {
            _ = try Realm(configuration: folder.configuration(objectTypes: [MemberWithoutLastName.self]))
        } catch Realm.Error.schemaMismatch {
            caught = true
        }
        #expect(caught)
    }

    @Test func aLowerSchemaVersionIsFail() throws {
        let t = try TestRealm(objectTypes: [Dog.self])
        t.configuration.schemaVersion = 3
        do { _ = try t.open() }
        t.configuration.schemaVersion = 2
        let error = try #require(throws: Realm.Error.self) { try t.open() }
        #expect(error.code == .fail)
    }
}
