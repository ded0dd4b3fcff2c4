import AtollAppConfig

extension ImportContext {
    /// The data source of the collections becomes the service and database remote data access
    /// (`user.mongoClient("mongodb-atlas").database("…")`) answers to, so those calls keep working.
    mutating func readRemoteAccess() {
        let sources = Set(collections.values.map { "\($0.service)/\($0.database)" })
        guard let first = collections.values.min(by: { $0.folder < $1.folder }) else { return }
        guard sources.count == 1 else {
            report.add(.needsAttention, "data_sources", "collections of \(sources.count) databases (\(sources.sorted().joined(separator: ", "))): "
                       + "remote data access answers to one; set remoteAccess.database")
            return
        }
        app.remoteAccess = .init(enabled: true, service: first.service, database: first.database)
        report.add(.mapped, "data_sources/\(first.service)/\(first.database)", "remoteAccess: service \(first.service), database \(first.database)")
    }
}
