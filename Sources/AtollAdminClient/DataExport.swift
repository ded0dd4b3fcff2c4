import Foundation

/// `atoll data export`: every realm of an app (or one), every type (or one), page by page into
/// `<folder>/<realm>/<Type>.json`, a canonical Extended JSON document a line, with the realm's
/// schema in `<folder>/<realm>/schema.json` for a later `atoll data import --schema`.
public struct DataExport: Sendable {
    public var client: AdminClient
    public var app: String
    public var type: String?
    public var realm: String?
    public var folder: URL
    /// Set to write `<Type>.bson` (mongodump's form) instead of `<Type>.json`: turns one canonical
    /// Extended JSON document into BSON (the tool passes AtollCore's `BSON.write`).
    public var bsonFromExtendedJSON: (@Sendable (String) throws -> [UInt8])?

    public init(client: AdminClient, app: String, type: String? = nil, realm: String? = nil, folder: URL) {
        self.client = client
        self.app = app
        self.type = type
        self.realm = realm
        self.folder = folder
    }

    /// The files written and how many documents each holds.
    @discardableResult
    public func run() async throws -> [(URL, Int)] {
        var written: [(URL, Int)] = []
        let realms: [String]
        if let realm { realms = [realm] } else { realms = try await client.dataRealms(app: app) }
        for path in realms {
            let directory = folder.appendingPathComponent(path.replacingOccurrences(of: "/", with: "%2F"), isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let head = try await client.exportPage(app: app, realm: path, type: nil)
            try head.schema.write(to: directory.appendingPathComponent("schema.json"))
            let schemas = (try? JSONSerialization.jsonObject(with: head.schema) as? [[String: Any]]) ?? []
            let types = schemas.filter { ($0["isEmbedded"] as? Bool) != true }.compactMap { $0["name"] as? String }
            for name in types where type == nil || type == name {
                let file = directory.appendingPathComponent("\(name).\(bsonFromExtendedJSON == nil ? "json" : "bson")")
                FileManager.default.createFile(atPath: file.path, contents: nil)
                let handle = try FileHandle(forWritingTo: file)
                defer { try? handle.close() }
                var after: Int? = 0
                var count = 0
                while let start = after {
                    let page = try await client.exportPage(app: app, realm: path, type: name, after: start)
                    for document in page.documents {
                        if let toBSON = bsonFromExtendedJSON { handle.write(Data(try toBSON(document))) } else { handle.write(Data((document + "\n").utf8)) }
                    }
                    count += page.documents.count
                    after = page.next
                }
                written.append((file, count))
            }
        }
        return written
    }
}
