import Atoll
import AtollTesting
import Foundation
import Testing

// A recipe app, as Realm apps are written: its models keep Swift names while the server's schema
// uses snake_case (propertiesMapping), it imports its API's JSON with Codable, edits by key-value
// coding, and keeps scratch drafts out of its main realm (shouldIncludeInDefaultSchema).

class Chef: Object, Codable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
}

class Ingredient: EmbeddedObject, Codable {
    @Persisted var name: String
    @Persisted var quantity: Double
    @Persisted var unit: String?
}

enum Difficulty: String, PersistableEnum, Codable {
    case easy, medium, hard
}

class Dish: Object, Codable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title: String
    @Persisted var cookingTime: Int
    @Persisted var createdAt: Date
    @Persisted var difficulty: Difficulty
    @Persisted var isFavorite: Bool?
    @Persisted var ingredients: List<Ingredient>
    @Persisted var nutrition: Map<String, Double>
    @Persisted var tags: MutableSet<String>
    @Persisted var author: Chef?

    enum CodingKeys: String, CodingKey {
        case _id, title, difficulty, ingredients, nutrition, tags, author
        case cookingTime = "cooking_time"
        case createdAt = "created_at"
        case isFavorite = "is_favorite"
    }

    override class func propertiesMapping() -> [String: String] {
        ["cookingTime": "cooking_time", "createdAt": "created_at", "isFavorite": "is_favorite"]
    }
}

class DraftRecipe: Object {
    @Persisted var title = ""
    @Persisted var notes = ""

    override class func shouldIncludeInDefaultSchema() -> Bool {
        return false
    }
}

private let apiResponse = """
[
  {
    "_id": "6600aa00aa00aa00aa00aa01",
    "title": "Shakshuka",
    "cooking_time": 25,
    "created_at": "2024-02-01T08:00:00Z",
    "difficulty": "easy",
    "ingredients": [
      { "name": "eggs", "quantity": 4, "unit": null },
      { "name": "tomatoes", "quantity": 400, "unit": "g" }
    ],
    "nutrition": { "kcal": 310, "protein": 18.5 },
    "tags": ["breakfast", "vegetarian"],
    "author": { "_id": "6600aa00aa00aa00aa00aaff", "name": "Yotam" }
  },
  {
    "_id": "6600aa00aa00aa00aa00aa02",
    "title": "Cassoulet",
    "cooking_time": 240,
    "created_at": "2024-01-15T18:30:00Z",
    "difficulty": "hard",
    "is_favorite": true,
    "ingredients": [{ "name": "beans", "quantity": 500, "unit": "g" }],
    "nutrition": {},
    "tags": ["winter"],
    "author": { "_id": "6600aa00aa00aa00aa00aaff", "name": "Yotam" }
  }
]
"""

final class DishStore {
    let realm: Realm

    init(folder: URL) throws {
        realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("recipes.realm")))
    }

    func importRecipes(_ data: Data) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let recipes = try decoder.decode([Dish].self, from: data)
        try realm.write {
            realm.add(recipes, update: .modified)
        }
    }

    func quickRecipes() -> Results<Dish> {
        return realm.objects(Dish.self).filter("cookingTime <= %@", 30).sorted(byKeyPath: "createdAt")
    }

    func markFavorites(_ recipes: Results<Dish>) throws {
        try realm.write {
            recipes.setValue(true, forKey: "isFavorite")
        }
    }

    func exportFavorites() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let favorites = realm.objects(Dish.self).where { $0.isFavorite == true }.sorted(by: \.title)
        return try encoder.encode(Array(favorites))
    }
}

@Suite struct ModelCustomisationApp {
    @Test func theRecipeAppImportsQueriesEditsAndExports() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try DishStore(folder: folder.url)
        try store.importRecipes(Data(apiResponse.utf8))
        try store.importRecipes(Data(apiResponse.utf8))  // a refresh updates, the shared chef included
        let realm = store.realm
        #expect(realm.objects(Dish.self).count == 2)
        #expect(realm.objects(Chef.self).count == 1)

        let shakshuka = realm.object(ofType: Dish.self, forPrimaryKey: try ObjectId(string: "6600aa00aa00aa00aa00aa01"))!
        #expect(shakshuka.ingredients.value(forKey: "name") as! [String] == ["eggs", "tomatoes"])
        #expect(shakshuka.nutrition.value(forKey: "kcal") as? Double == 310)
        #expect(shakshuka.value(forKeyPath: "author.name") as? String == "Yotam")

        let quick = store.quickRecipes()
        #expect(quick.value(forKey: "title") as! [String] == ["Shakshuka"])
        try store.markFavorites(quick)

        let cassoulet = realm.objects(Dish.self).filter("title == 'Cassoulet'").first!
        try realm.write {
            cassoulet["cookingTime"] = 200
            cassoulet.setValue("medium", forKey: "difficulty")
        }
        #expect(cassoulet.cookingTime == 200 && cassoulet.difficulty == .medium)
        #expect(cassoulet.objectSchema.properties.map { $0.name }.contains("cookingTime"))
        // realm-swift's introspection: the Swift name, and the stored one as columnName.
        #expect(cassoulet.objectSchema["cookingTime"]?.columnName == "cooking_time")
        #expect(realm.schema["Dish"]?["cookingTime"]?.columnName == "cooking_time")
        #expect(realm.schema["Dish"]?["title"]?.columnName == "title")
        #expect(realm.schema["Dish"]?["cooking_time"] == nil)
        #expect(realm.objects(Dish.self).max(ofProperty: "cookingTime") as Int? == 200)

        let exported = try JSONSerialization.jsonObject(with: store.exportFavorites()) as! [[String: Any]]
        #expect(exported.map { $0["title"] as! String } == ["Cassoulet", "Shakshuka"])
        #expect(exported.first?["cooking_time"] as? Int == 200)
        #expect((exported.last?["ingredients"] as? [[String: Any]])?.count == 2)
    }

    @Test func draftsLiveInTheirOwnRealm() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let main = try Realm(configuration: Realm.Configuration(fileURL: folder.url.appendingPathComponent("main.realm")))
        #expect(main.schema["DraftRecipe"] == nil)

        var draftsConfiguration = Realm.Configuration(fileURL: folder.url.appendingPathComponent("drafts.realm"))
        draftsConfiguration.objectTypes = [DraftRecipe.self]
        let drafts = try Realm(configuration: draftsConfiguration)
        try drafts.write {
            drafts.create(DraftRecipe.self, value: ["title": "Soup?", "notes": "more salt"])
        }
        #expect(drafts.objects(DraftRecipe.self).first?.notes == "more salt")
    }
}
