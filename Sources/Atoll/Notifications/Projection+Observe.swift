import AtollCore
import Foundation

extension ProjectionObservable {
    /// Calls `block` when a projected property of the projected object changes, or the object is
    /// deleted. Property changes carry the names the projection gives them.
    ///
    /// ```swift
    /// let token = projection.observe(keyPaths: ["firstName"]) { change in
    ///     if case .change(let person, let properties) = change { print(properties.map(\.name)) }
    /// }
    /// ```
    /// `keyPaths` name projection properties, or (as realm-swift has them) properties of the
    /// projected object; `nil` watches every projected property. A property reached through a
    /// to-one link (`\Person.address?.city`) counts a change of any property of the linked
    /// object; changes inside a list or set are observed with ``ProjectedCollection/observe``.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let schema = projectionSchema
        var watched = schema.properties
        if let keyPaths, !keyPaths.isEmpty {
            for keyPath in keyPaths where !schema.properties.contains(where: { $0.label == keyPath || $0.rootName == keyPath }) {
                preconditionFailure("'\(keyPath)' is not a property of \(Self.self) or of the \(Root.self) it projects")
            }
            watched = watched.filter { keyPaths.contains($0.label) || keyPaths.contains($0.rootName) }
        }
        var rootPaths: [String] = []
        for name in watched.map(\.rootName) where !rootPaths.contains(name) {
            rootPaths.append(name)
            rootPaths += Self.linkedPaths(name)
        }
        // Without a queue the block gets this projection; on a queue, one of the frozen object.
        let same: Self? = queue == nil ? self : nil
        return rootObject.observe(keyPaths: rootPaths, on: queue) { (change: ObjectChange<Root>) in
            switch change {
            case .deleted: block(.deleted)
            case .error(let error): block(.error(error))
            case .change(let root, let properties):
                var changes: [PropertyChange] = []
                for property in properties {
                    for projected in watched where projected.rootName == property.name {
                        changes.append(PropertyChange(name: projected.label,
                                                      oldValue: property.oldValue.flatMap { Self.read(projected, from: $0, named: property.name) },
                                                      newValue: projected.read(root)))
                    }
                }
                if !changes.isEmpty { block(.change(same ?? Self(projecting: root), changes)) }
            }
        }
    }

    /// Calls `block` when the named projection properties change (see ``observe(keyPaths:on:_:)``).
    ///
    /// ```swift
    /// let token = projection.observe(keyPaths: [\PersonProjection.homeCity]) { change in … }
    /// ```
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.isEmpty ? nil : keyPaths.map(projectedName), on: queue, block)
    }

    /// The projected object's property that the projection property `keyPath` reads, found by
    /// reading it from a projection of a probe object.
    private func projectedName(_ keyPath: PartialKeyPath<Self>) -> String {
        guard let name = KeyPathNames.nameRead(on: Root.self, by: { _ = Self(projecting: $0)[keyPath: keyPath] }) else {
            preconditionFailure("The key path \(keyPath) does not name a @Projected property of \(Self.self)")
        }
        return name
    }

    /// `name.x` for every property `x` of the object a to-one link `name` of the root points at, so
    /// a change of the linked object counts as one of `name`.
    private static func linkedPaths(_ name: String) -> [String] {
        let info = ClassInfo.of(Root.self)
        guard let index = info.propertyIndex[name], index < info.fields.count else { return [] }
        let shape = info.fields[index].type.shape
        guard shape.type == .object, shape.collection == .single, let target = shape.objectClass else { return [] }
        return ClassInfo.of(target).publicNames.map { "\(name).\($0)" }
    }

    /// The projected value `property` had when the root's property `name` was `old`, read from a
    /// scratch object holding `old`.
    private static func read(_ property: ProjectionSchema.Property, from old: Any, named name: String) -> Any? {
        let scratch = Root()
        guard (try? ClassInfo.of(Root.self).setValue(old, forKey: name, of: scratch)) != nil else { return nil }
        return property.read(scratch)
    }
}
