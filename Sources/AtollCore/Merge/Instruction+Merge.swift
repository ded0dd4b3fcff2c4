/// Path helpers the merge rules use to compare what two instructions touch.
extension Instruction {
    /// The path of the field or collection an object-level instruction changes, or `nil` for
    /// schema instructions and object creation and erasure.
    var fieldPath: [PathElement]? {
        switch self {
        case .addTable, .addColumn, .createObject, .eraseObject: nil
        case .set(_, let p, _), .addInteger(_, let p, _), .listInsert(_, let p, _, _), .listErase(_, let p, _),
             .listMove(_, let p, _, _), .clear(_, let p), .setInsert(_, let p, _), .setErase(_, let p, _),
             .mapErase(_, let p, _):
            p
        }
    }

    /// The same instruction with its field path replaced (no change for instructions without one).
    func withFieldPath(_ p: [PathElement]) -> Instruction {
        switch self {
        case .addTable, .addColumn, .createObject, .eraseObject: self
        case .set(let o, _, let v): .set(o, path: p, value: v)
        case .addInteger(let o, _, let d): .addInteger(o, path: p, delta: d)
        case .listInsert(let o, _, let i, let v): .listInsert(o, path: p, index: i, value: v)
        case .listErase(let o, _, let i): .listErase(o, path: p, index: i)
        case .listMove(let o, _, let f, let t): .listMove(o, path: p, from: f, to: t)
        case .clear(let o, _): .clear(o, path: p)
        case .setInsert(let o, _, let v): .setInsert(o, path: p, value: v)
        case .setErase(let o, _, let v): .setErase(o, path: p, value: v)
        case .mapErase(let o, _, let k): .mapErase(o, path: p, key: k)
        }
    }

    /// A structural change to the list at `fieldPath` (insert, erase, move), if this is one.
    var listChange: ListChange? {
        switch self {
        case .listInsert(_, _, let i, _): .insert(i)
        case .listErase(_, _, let i): .erase(i)
        case .listMove(_, _, let f, let t): .move(from: f, to: t)
        default: nil
        }
    }

    /// The same list instruction with new positions from `change` (which must be of the same kind).
    func withListChange(_ change: ListChange) -> Instruction {
        switch (self, change) {
        case (.listInsert(let o, let p, _, let v), .insert(let i)): .listInsert(o, path: p, index: i, value: v)
        case (.listErase(let o, let p, _), .erase(let i)): .listErase(o, path: p, index: i)
        case (.listMove(let o, let p, _, _), .move(let f, let t)): .listMove(o, path: p, from: f, to: t)
        default: self
        }
    }
}

extension Array where Element == PathElement {
    /// Whether `self` lies strictly inside `prefix`.
    func isStrictlyInside(_ prefix: [PathElement]) -> Bool {
        count > prefix.count && starts(with: prefix)
    }
}
