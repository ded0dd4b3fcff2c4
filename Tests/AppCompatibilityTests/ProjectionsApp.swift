import Atoll
import AtollTesting
import Foundation
import Testing

// A reading-list app, as Realm apps are written: links are stored as URLs through a custom
// persistable mapping, and the list screen works with a projection of the article model, which
// it queries, sorts and observes.

// URL and the protocol are both public, so Swift wants the members public (with realm-swift too).
extension URL: FailableCustomPersistable {
    public typealias PersistedType = String

    public init?(persistedValue: String) {
        self.init(string: persistedValue)
    }

    public var persistableValue: PersistedType {
        self.absoluteString
    }
}

class PrjAuthor: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var homepage: URL?
}

class PrjArticle: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title: String
    @Persisted var link: URL = URL(string: "about:blank")!
    @Persisted var mirrors: List<URL>
    @Persisted var readingMinutes: Int
    @Persisted var isRead: Bool
    @Persisted var author: PrjAuthor?
    @Persisted var related: List<PrjArticle>
}

class PrjArticleRow: Projection<PrjArticle> {
    @Projected(\PrjArticle.title) var title
    @Projected(\PrjArticle.link.host) var site
    @Projected(\PrjArticle.author?.name) var byline
    @Projected(\PrjArticle.isRead) var isRead
    @Projected(\PrjArticle.related.projectTo.title) var relatedTitles: ProjectedCollection<String>
}

final class PrjReadingListModel {
    let realm: Realm
    private(set) var rows: Results<PrjArticleRow>
    private var token: NotificationToken?
    private(set) var updates: [[Int]] = []

    init(realm: Realm) {
        self.realm = realm
        rows = realm.objects(PrjArticleRow.self).where { !$0.isRead }.sorted(byKeyPath: "readingMinutes")
        token = rows.observe { [weak self] changes in
            switch changes {
            case .initial:
                break
            case .update(_, let deletions, let insertions, let modifications):
                self?.updates.append(deletions + insertions + modifications)
            case .error(let error):
                fatalError("\(error)")
            }
        }
    }

    func save(title: String, link: String, minutes: Int, author: PrjAuthor?) throws {
        let article = PrjArticle()
        article.title = title
        article.link = URL(string: link)!
        article.readingMinutes = minutes
        article.author = author
        try realm.write {
            realm.add(article)
        }
    }

    func markRead(_ row: PrjArticleRow) throws {
        try realm.write {
            row.isRead = true
        }
    }

    func articles(on site: URL) -> Results<PrjArticle> {
        return realm.objects(PrjArticle.self).where { $0.link == site || $0.mirrors.contains(site) }
    }

    deinit {
        token?.invalidate()
    }
}

@Suite struct ProjectionsApp {
    @Test func theReadingListProjectsQueriesAndObservesArticles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.url.appendingPathComponent("reading.realm")))
        let model = PrjReadingListModel(realm: realm)

        let author = PrjAuthor()
        author.name = "Mattt"
        author.homepage = URL(string: "https://nshipster.com")
        try model.save(title: "Swift Regex", link: "https://nshipster.com/regex", minutes: 12, author: author)
        try model.save(title: "Property Wrappers", link: "https://swift.org/blog/wrappers", minutes: 5, author: nil)
        #expect(model.rows.map { $0.title } == ["Property Wrappers", "Swift Regex"])
        #expect(model.rows.last?.site == "nshipster.com")
        #expect(model.rows.last?.byline == "Mattt")
        #expect(model.rows.first?.byline == nil)

        let regex = realm.objects(PrjArticle.self).filter("title == %@", "Swift Regex").first!
        try realm.write {
            regex.mirrors.append(URL(string: "https://mirror.example/regex")!)
            regex.related.append(realm.objects(PrjArticle.self).filter("readingMinutes == 5").first!)
        }
        #expect(model.rows.last?.relatedTitles.first == "Property Wrappers")
        #expect(model.articles(on: URL(string: "https://mirror.example/regex")!).first?.title == "Swift Regex")
        #expect(realm.objects(PrjAuthor.self).first?.homepage?.host == "nshipster.com")

        var seen: [String] = []
        let row = PrjArticleRow(projecting: regex)
        let token = row.observe(keyPaths: ["isRead"]) { change in
            if case .change(_, let properties) = change {
                seen += properties.map { $0.name }
            }
        }
        try model.markRead(row)
        #expect(seen == ["isRead"])
        #expect(model.rows.map { $0.title } == ["Property Wrappers"])
        #expect(!model.updates.isEmpty)

        let frozen = model.rows.freeze()
        try model.markRead(model.rows.first!)
        #expect(frozen.count == 1 && model.rows.isEmpty)
        token.invalidate()
    }
}
