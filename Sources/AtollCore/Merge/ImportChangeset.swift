/// The changesets a data import writes, and why the server may integrate them without the
/// state-dependent checks of an upload (``ReplicaState/validate(_:limits:)``).
///
/// An import changeset is made by the server itself, from the realm's schema, and appended on the
/// newest version under the store's write lock: there is nothing to rebase it over. What is left
/// of ``ReplicaState/validate(_:limits:)`` is what it checks against the *state*, and a changeset
/// of the import's shape needs none of it:
/// - every object instruction follows the `createObject` of its object (so the object exists:
///   it existed, or the `createObject` made it, the schema check having ensured the type has
///   objects and the key its type);
/// - every path is one property of that object (or one map key under a map property), of the
///   collection kind the instruction needs;
/// - a collection is cleared before it is filled, list positions count up from 0, and the
///   elements written after a clear are at most `maximumCollectionCount`;
/// - values, keys and primary keys are within `maximumValueSize`.
///
/// So ``check(_:schema:limits:)`` passing means `validate` would pass on *any* state with this
/// schema, which the tests check against it. The schema itself is checked as for an upload.
///
/// ```swift
/// try ImportChangeset.check(changeset, schema: history)   // MergeError when not of the shape
/// ```
package enum ImportChangeset {
    /// Checks that `changeset` fits `schema` (``HistorySchema/validate(_:)``) and has an import's shape.
    /// - Throws: ``MergeError`` (`schemaViolation`, or `invalidInstruction` naming the instruction).
    /// - Complexity: O(*n*) for *n* instructions (plus the sizes of their values).
    package static func check(_ changeset: Changeset, schema: HistorySchema, limits: ChangesetLimits = ChangesetLimits()) throws(MergeError) {
        var schema = schema
        try schema.validate(changeset)
        var current: ObjectID?
        var currentType: ObjectSchema?
        // Elements written to each collection property of the current object since its clear.
        var counts: [String: Int] = [:]
        for (index, instruction) in changeset.instructions.enumerated() {
            func refuse(_ problem: String) -> MergeError {
                MergeError(.invalidInstruction, "instruction \(index) of the import changeset: \(problem)")
            }
            if let problem = ReplicaState.sizeProblem(instruction, limits) { throw refuse(problem) }
            // The one property a path names (and whether it goes on to a map key), on the current object.
            func property(_ id: ObjectID, _ path: [PathElement]) throws(MergeError) -> (Property, keyed: Bool) {
                guard let current, id == current, let currentType else {
                    throw refuse("it changes an object other than the one created just before")
                }
                guard case .property(let name)? = path.first, let property = currentType[property: name] else {
                    throw refuse("its path does not start with a property of \(id.type)")
                }
                switch path.count {
                case 1: return (property, false)
                case 2:
                    guard case .key = path[1], property.collection == .map else { throw refuse("its path goes deeper than an import writes") }
                    return (property, true)
                default: throw refuse("its path goes deeper than an import writes")
                }
            }
            func count(_ name: String) throws(MergeError) -> Int {
                guard let written = counts[name] else { throw refuse("it fills \(name) before clearing it") }
                guard written < limits.maximumCollectionCount else {
                    throw refuse("\(name) would hold more than \(limits.maximumCollectionCount) elements")
                }
                counts[name] = written + 1
                return written
            }
            switch instruction {
            case .addTable, .addColumn:
                guard current == nil else { throw refuse("a schema instruction after the objects") }
            case .createObject(let id):
                current = id
                currentType = schema.types[id.type]
                counts = [:]
            case .set(let id, let path, _):
                let (property, keyed) = try property(id, path)
                if keyed {
                    _ = try count(property.name)
                } else if property.collection != .single {
                    throw refuse("it sets \(property.name), a collection, as a whole")
                }
            case .clear(let id, let path):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection != .single else { throw refuse("it clears something that is not a collection") }
                counts[property.name] = 0
            case .listInsert(let id, let path, let position, _):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection == .list else { throw refuse("a list insert into \(property.name), not a list") }
                guard try count(property.name) == position else { throw refuse("a list insert at \(position), not after the last") }
            case .setInsert(let id, let path, _):
                let (property, keyed) = try property(id, path)
                guard !keyed, property.collection == .set else { throw refuse("a set insert into \(property.name), not a set") }
                _ = try count(property.name)
            case .eraseObject, .addInteger, .listErase, .listMove, .setErase, .mapErase:
                throw refuse("not an instruction an import makes")
            }
        }
    }
}
