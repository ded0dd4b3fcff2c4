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
        try Checker(schema: schema, version: changeset.version, limits: limits).check(changeset.instructions[...])
    }

    /// ``ImportChangeset/check(_:schema:limits:)`` of a part of a changeset: the instructions
    /// from ``offset`` on, after ones that left the schema at ``schema`` and no object started.
    /// A batch checks each document alone with it (one pass, where the typer wrote it), which
    /// refuses exactly what checking the changeset of the schema instructions and that document does.
    ///
    /// The schema check and the shape check are one pass; the schema's problems still win over
    /// the shape's wherever they are, as when the whole schema check ran first.
    ///
    /// ```swift
    /// let checker = ImportChangeset.Checker(schema: afterSchema, version: 1, offset: schemaInstructions.count)
    /// if let refusal = checker.admit(&instructions, from: start, addsSchema: &addsSchema) { … }   // the document's removed
    /// ```
    package struct Checker: Sendable {
        /// The schema the checked instructions start from.
        package var schema: HistorySchema
        /// The changeset's client version (named in schema violations).
        package var version: Int64
        package var limits: ChangesetLimits
        /// The index in the changeset of the first instruction checked (named in errors).
        package var offset: Int

        package init(schema: HistorySchema, version: Int64, limits: ChangesetLimits = ChangesetLimits(), offset: Int = 0) {
            self.schema = schema
            self.version = version
            self.limits = limits
            self.offset = offset
        }

        /// Checks the instructions of `instructions` from `start` on (one document's); when they
        /// are refused, removes them and says why. `addsSchema` is set when admitted ones hold
        /// schema instructions (a typed document never does).
        package func admit(_ instructions: inout [Instruction], from start: Int, addsSchema: inout Bool) -> MergeError? {
            do {
                if try check(instructions[start...]) { addsSchema = true }
                return nil
            } catch {
                instructions.removeSubrange(start...)
                return error
            }
        }

        /// Whether the instructions hold schema instructions.
        /// - Throws: ``MergeError``, the one ``ImportChangeset/check(_:schema:limits:)`` throws.
        @discardableResult
        package func check(_ instructions: ArraySlice<Instruction>) throws(MergeError) -> Bool {
            var addsSchema = false
            var schema = schema
            // Asymmetric objects created by these instructions (``HistorySchema/validate(_:)``).
            var created: Set<ObjectID> = []
            var shape = Shape(limits: limits)
            var shapeProblem: MergeError?
            for position in instructions.indices {
                let index = offset + (position - instructions.startIndex)
                let instruction = instructions[position]
                if let problem = schema.problem(with: instruction) ?? schema.asymmetricProblem(with: instruction, created: &created) {
                    throw MergeError(.schemaViolation, "instruction \(index) of client version \(version) breaks the realm's schema: \(problem)")
                }
                switch instruction {
                case .addTable, .addColumn:
                    schema.absorb(instruction)
                    addsSchema = true
                default: break
                }
                // Past the first problem of shape only the schema is checked: the first is the one named.
                if shapeProblem == nil, let problem = shape.problem(with: instruction, schema) {
                    shapeProblem = MergeError(.invalidInstruction, "instruction \(index) of the import changeset: \(problem)")
                }
            }
            if let shapeProblem { throw shapeProblem }
            return addsSchema
        }
    }

    /// The import's shape, instruction after instruction: what is wrong with the next one, or nil.
    private struct Shape {
        let limits: ChangesetLimits
        var current: ObjectID?
        var currentType: ObjectSchema?
        /// Elements written to each collection property of the current object since its clear.
        var counts: [String: Int] = [:]

        init(limits: ChangesetLimits) {
            self.limits = limits
        }

        /// `schema` has taken in every schema instruction so far (those after the first object are refused).
        mutating func problem(with instruction: Instruction, _ schema: HistorySchema) -> String? {
            if let problem = ReplicaState.sizeProblem(instruction, limits) { return problem }
            // The one property a path names (and whether it goes on to a map key), on the current object.
            func property(_ id: ObjectID, _ path: [PathElement]) -> Result<(Property, keyed: Bool), Refused> {
                guard let current, id == current, let currentType else {
                    return .failure(Refused("it changes an object other than the one created just before"))
                }
                guard case .property(let name)? = path.first, let property = currentType[property: name] else {
                    return .failure(Refused("its path does not start with a property of \(id.type)"))
                }
                switch path.count {
                case 1: return .success((property, false))
                case 2:
                    guard case .key = path[1], property.collection == .map else { return .failure(Refused("its path goes deeper than an import writes")) }
                    return .success((property, true))
                default: return .failure(Refused("its path goes deeper than an import writes"))
                }
            }
            func count(_ name: String) -> Result<Int, Refused> {
                guard let written = counts[name] else { return .failure(Refused("it fills \(name) before clearing it")) }
                guard written < limits.maximumCollectionCount else {
                    return .failure(Refused("\(name) would hold more than \(limits.maximumCollectionCount) elements"))
                }
                counts[name] = written + 1
                return .success(written)
            }
            do throws(Refused) {
                switch instruction {
                case .addTable, .addColumn:
                    guard current == nil else { return "a schema instruction after the objects" }
                case .createObject(let id):
                    current = id
                    currentType = schema.types[id.type]
                    counts = [:]
                case .set(let id, let path, _):
                    let (property, keyed) = try property(id, path).get()
                    if keyed {
                        _ = try count(property.name).get()
                    } else if property.collection != .single {
                        return "it sets \(property.name), a collection, as a whole"
                    }
                case .clear(let id, let path):
                    let (property, keyed) = try property(id, path).get()
                    guard !keyed, property.collection != .single else { return "it clears something that is not a collection" }
                    counts[property.name] = 0
                case .listInsert(let id, let path, let position, _):
                    let (property, keyed) = try property(id, path).get()
                    guard !keyed, property.collection == .list else { return "a list insert into \(property.name), not a list" }
                    guard try count(property.name).get() == position else { return "a list insert at \(position), not after the last" }
                case .setInsert(let id, let path, _):
                    let (property, keyed) = try property(id, path).get()
                    guard !keyed, property.collection == .set else { return "a set insert into \(property.name), not a set" }
                    _ = try count(property.name).get()
                case .eraseObject, .addInteger, .listErase, .listMove, .setErase, .mapErase:
                    return "not an instruction an import makes"
                }
            } catch {
                return error.problem
            }
            return nil
        }
    }

    private struct Refused: Error {
        var problem: String
        init(_ problem: String) { self.problem = problem }
    }
}
