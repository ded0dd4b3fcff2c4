import Atoll
import AtollTesting
import Foundation
import Testing

// A survey app in Realm's style: free-form answers in AnyRealmValue, ratings as a list of ints
// queried and aggregated directly, answers filtered by the kind of value they hold.
class SvyRespondent: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
}

class SvyResponse: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var question = ""
    @Persisted var answer: AnyRealmValue
    @Persisted var ratings: List<Int>
    @Persisted var keywords: MutableSet<String>
    @Persisted var extra: Map<String, AnyRealmValue>

    convenience init(question: String, answer: AnyRealmValue) {
        self.init()
        self.question = question
        self.answer = answer
    }
}

enum SvyReport {
    static func describe(_ answer: AnyRealmValue) -> String {
        switch answer {
        case .none: return "no answer"
        case let .int(value): return "number \(value)"
        case let .double(value): return "number \(value)"
        case let .string(text): return "text: \(text)"
        case let .bool(flag): return flag ? "yes" : "no"
        case let .object(object):
            if let respondent = answer.object(SvyRespondent.self) { return "refers to \(respondent.name)" }
            return "object \(object)"
        case .list(let items): return "\(items.count) choices"
        case .dictionary(let entries): return "\(entries.count) fields"
        case .float, .data, .date, .objectId, .decimal128, .uuid: return "other"
        }
    }
}

@Suite struct SurveyApp {
    @Test func answersOfEveryKindAreStoredQueriedAndSummarised() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: folder.configuration(objectTypes: [SvyRespondent.self, SvyResponse.self]))
        let ana = SvyRespondent()
        ana.name = "Ana"
        try realm.write {
            realm.add(SvyResponse(question: "Age", answer: .int(34)))
            realm.add(SvyResponse(question: "Height", answer: .double(1.72)))
            realm.add(SvyResponse(question: "Comments", answer: .string("Great survey")))
            realm.add(SvyResponse(question: "Subscribed", answer: .bool(true)))
            realm.add(SvyResponse(question: "Referred by", answer: .object(ana)))
            realm.add(SvyResponse(question: "Colours", answer: AnyRealmValue.fromArray([.string("red"), .string("blue")])))
            realm.add(SvyResponse(question: "Skipped", answer: .none))
            let rated = realm.create(SvyResponse.self, value: ["question": "Rate us", "answer": 4])
            rated.ratings.append(objectsIn: [4, 5, 3, 5])
            rated.keywords.insert(objectsIn: ["fast", "clear"])
            rated.extra["device"] = .string("phone")
            rated.extra["minutes"] = .int(7)
        }

        let responses = realm.objects(SvyResponse.self)
        let numeric = responses.filter("answer.@type == 'numeric'").sorted(byKeyPath: "question")
        #expect(numeric.map { $0.question } == ["Age", "Height", "Rate us"])
        #expect(responses.filter("answer > 2").count == 2)
        #expect(responses.where { $0.answer == .string("Great survey") }.count == 1)
        #expect(responses.filter("answer == nil").first?.question == "Skipped")

        let summary = responses.sorted(byKeyPath: "question").map { "\($0.question): \(SvyReport.describe($0.answer))" }
        #expect(summary.contains("Referred by: refers to Ana"))
        #expect(summary.contains("Colours: 2 choices"))

        let rated = responses.filter("question == 'Rate us'").first!
        #expect(rated.ratings.max() == 5)
        #expect(rated.ratings.sum() == 17)
        let average: Double? = rated.ratings.average()
        #expect(average == 4.25)
        #expect(Array(rated.ratings.filter("self >= 4").sorted(ascending: false)) == [5, 5, 4])
        #expect(Array(rated.ratings.distinct()) == [4, 5, 3])
        #expect(Array(rated.keywords.sorted(ascending: true)) == ["clear", "fast"])
        #expect(rated.extra["minutes"] == .int(7))

        var updates = 0
        let token = rated.ratings.observe { change in
            if case .update = change { updates += 1 }
        }
        try realm.write { rated.ratings.append(1) }
        realm.refresh()
        token.invalidate()
        #expect(updates == 1)
    }
}
