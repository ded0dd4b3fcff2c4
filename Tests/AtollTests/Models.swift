import Atoll
import Foundation

final class Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: Person?
}

final class Address: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
}

final class Person: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var height: Double?
    @Persisted var dogs: List<Dog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var address: Address?
    @Persisted var nicknames: List<String>
}

final class AllTypes: Object {
    // AppCompatibilityTests has an `AllTypes` of a file Realm wrote; one name per class in a process.
    override class func className() -> String { "StoreAllTypes" }
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var double = 0.0
    @Persisted var float: Float = 0
    @Persisted var string = ""
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var data = Data()
    @Persisted var objectId = ObjectId.generate()
    @Persisted var uuid = UUID()
    @Persisted var decimal = Decimal128()
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optDouble: Double?
    @Persisted var optFloat: Float?
    @Persisted var optString: String?
    @Persisted var optDate: Date?
    @Persisted var optData: Data?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var optDecimal: Decimal128?
    @Persisted var link: Dog?
    @Persisted var intList: List<Int>
    @Persisted var optStringList: List<String?>
    @Persisted var dogList: List<Dog>
    @Persisted var stringSet: MutableSet<String>
    @Persisted var dogMap: Map<String, Dog?>
    @Persisted var embedded: Address?
    @Persisted var embeddedList: List<Address>
}

final class Task: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted(indexed: true) var owner = ""
    @Persisted var done = false
    @Persisted var priority = 0
}
