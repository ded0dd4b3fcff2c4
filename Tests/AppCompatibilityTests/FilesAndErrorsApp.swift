import Atoll
import AtollTesting
import Foundation
import Testing

// A recipe app that ships a pre-filled realm, keeps its file small, backs it up, and handles
// Realm's errors, written as Realm's docs show each of these.

final class Recipe: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
    @Persisted var minutes = 0
    @Persisted var ingredients: List<String>
    @Persisted var rating: Double?
}

final class RecipeStore {
    let folder: URL
    private(set) var lastError: String?

    init(folder: URL) {
        self.folder = folder
    }

    var configuration: Realm.Configuration {
        var config = Realm.Configuration()
        config.fileURL = folder.appendingPathComponent("recipes.realm")
        config.objectTypes = [Recipe.self]
        // The recipes the app ships with, copied on the first launch.
        config.seedFilePath = folder.appendingPathComponent("bundle/recipes-seed.realm")
        config.shouldCompactOnLaunch = { totalBytes, usedBytes in
            // Compact when more than 30 % of the file is free space.
            return (Double(usedBytes) / Double(totalBytes)) < 0.7
        }
        return config
    }

    func openRealm() -> Realm? {
        do {
            return try Realm(configuration: configuration)
        } catch Realm.Error.fileNotFound {
            lastError = "The bundled recipes are missing."
        } catch Realm.Error.schemaMismatch {
            lastError = "The recipes need a migration."
        } catch {
            let nsError = error as NSError
            lastError = "\(nsError.domain) \(nsError.code): \(nsError.localizedDescription)"
        }
        return nil
    }

    func addRecipe(_ title: String, minutes: Int, to realm: Realm) throws {
        realm.beginWrite()
        let recipe = Recipe()
        recipe.title = title
        recipe.minutes = minutes
        realm.add(recipe, update: .modified)
        try realm.commitWrite()
    }

    func backUp(_ realm: Realm, as name: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try realm.writeCopy(toFile: url)
        return url
    }

    @discardableResult
    func reset() -> Bool {
        do {
            return try Realm.deleteFiles(for: configuration)
        } catch let error as Realm.Error {
            switch error.code {
            case .alreadyOpen:
                lastError = "Close the recipes before resetting them."
            default:
                lastError = error.localizedDescription
            }
            return false
        } catch {
            lastError = error.localizedDescription
            return false
        }
    }

    /// What a debug screen shows about the realm.
    func describeSchema(of realm: Realm) -> [String] {
        return realm.schema.objectSchema.map { objectSchema in
            let key = objectSchema.primaryKeyProperty?.name ?? "none"
            let fields = objectSchema.properties.map { property -> String in
                var text = property.name
                if property.isArray { text += "[]" }
                if property.isOptional { text += "?" }
                return text
            }
            return "\(objectSchema.className) key=\(key) \(fields.joined(separator: ","))"
        }
    }
}

/// The seed an app's build step makes: a realm written once, copied into the bundle.
private func buildSeed(at url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let builderURL = url.deletingLastPathComponent().appendingPathComponent("builder.realm")
    let builder = try Realm(configuration: Realm.Configuration(fileURL: builderURL, objectTypes: [Recipe.self]))
    try builder.write {
        builder.create(Recipe.self, value: ["title": "Pancakes", "minutes": 20, "ingredients": ["flour", "milk", "eggs"]])
        builder.create(Recipe.self, value: ["title": "Omelette", "minutes": 10, "ingredients": ["eggs"]])
    }
    try builder.writeCopy(toFile: url)
}

@Suite struct FilesAndErrorsApp {
    @Test func theFirstLaunchStartsFromTheBundledRecipes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = RecipeStore(folder: folder.url)
        #expect(store.openRealm() == nil)
        #expect(store.lastError == "The bundled recipes are missing.")

        try buildSeed(at: store.configuration.seedFilePath!)
        #expect(!Realm.fileExists(for: store.configuration))
        let realm = try #require(store.openRealm())
        #expect(Realm.fileExists(for: store.configuration))
        #expect(realm.objects(Recipe.self).sorted(byKeyPath: "title").map(\.title) == ["Omelette", "Pancakes"])
        try store.addRecipe("Soup", minutes: 45, to: realm)
        #expect(realm.objects(Recipe.self).count == 3)
        #expect(store.describeSchema(of: realm) == ["Recipe key=_id _id,title,minutes,ingredients[],rating?"])
    }

    @Test func aBackupOpensAsARealmAndResetNeedsTheRealmClosed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = RecipeStore(folder: folder.url)
        try buildSeed(at: store.configuration.seedFilePath!)
        var backup: URL?
        do {
            let realm = try #require(store.openRealm())
            backup = try store.backUp(realm, as: "backup.realm")
            #expect(!store.reset())
            #expect(store.lastError == "Close the recipes before resetting them.")
            do {
                _ = try store.backUp(realm, as: "backup.realm")
                Issue.record("a second backup under the same name was written")
            } catch Realm.Error.fileExists {
                // expected: a copy never replaces a file
            }
        }
        #expect(store.reset())
        #expect(!Realm.fileExists(for: store.configuration))
        let restored = try Realm(configuration: Realm.Configuration(fileURL: backup, objectTypes: [Recipe.self]))
        #expect(restored.objects(Recipe.self).count == 2)
    }

    @Test func aLaterLaunchCompactsAFileThatIsMostlyFree() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = RecipeStore(folder: folder.url)
        try buildSeed(at: store.configuration.seedFilePath!)
        let path = store.configuration.fileURL!.path
        do {
            let realm = try #require(store.openRealm())
            let notes = String(repeating: "stir ", count: 400)
            try realm.write {
                for i in 0..<1_500 { realm.create(Recipe.self, value: ["title": "Draft \(i) \(notes)"]) }
            }
            try realm.write { realm.delete(realm.objects(Recipe.self).filter("title BEGINSWITH 'Draft'")) }
        }
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        // The drafts' rows are free space now (their history stays): about half the file.
        let realm = try #require(store.openRealm())
        let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(after < before)
        #expect(realm.objects(Recipe.self).count == 2)
    }

    @Test func errorsReadAsRealmSwiftsNSErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = RecipeStore(folder: folder.url)
        try buildSeed(at: store.configuration.seedFilePath!)
        let realm = try #require(store.openRealm())
        do {
            try realm.writeCopy(toFile: folder.url.appendingPathComponent("missing-folder/backup.realm"))
            Issue.record("a copy into a missing folder was written")
        } catch {
            // `catch let error as NSError` reads the same on Apple platforms; on Linux a Swift
            // error becomes an NSError only by coercion.
            let nsError = error as NSError
            #expect(nsError.domain == "io.realm")
            #expect(nsError.code == Realm.Error.Code.fileNotFound.rawValue)
            #expect(nsError.localizedDescription.contains("does not exist"))
        }
    }
}
