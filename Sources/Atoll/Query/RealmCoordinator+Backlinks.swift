import AtollCore

extension RealmCoordinator {
    /// The `LinkingObjects` properties of the classes bound to this file's tables, for binding
    /// queries (`assignee.@count > 0`). They are computed, not stored or synced, so they are not in
    /// ``schema``; origin properties carry their persisted names.
    var queryBacklinks: [String: [ComputedBacklink]] {
        var result: [String: [ComputedBacklink]] = [:]
        for table in allTables {
            guard let info = table.classInfo, !info.linkingFields.isEmpty else { continue }
            result[table.name] = info.linkingFields.map { field in
                let origin = ClassInfo.of(field.originClass)
                let persisted = origin.property(named: field.originProperty)?.name ?? field.originProperty
                return ComputedBacklink(name: field.name, originType: origin.schema.name, originProperty: persisted)
            }
        }
        return result
    }
}

extension ClassInfo {
    /// A `LinkingObjects` property named `name`, as a list of its origin objects: what name
    /// resolution follows into the origin type (`assignee.name` of a task → the user's `name`).
    func linkingProperty(named name: String) -> Property? {
        guard let field = linkingFields.first(where: { $0.name == name }) else { return nil }
        return Property(name: name, type: .object, collection: .list, objectType: ClassInfo.of(field.originClass).schema.name)
    }
}
