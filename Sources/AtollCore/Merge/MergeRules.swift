/// The pairwise merge rules: one instruction rewritten to apply after a concurrent one.
///
/// For two concurrent instructions `a` and `b` made on the same state, applying `a` then
/// `rebase(b, over: a)` gives the same state as applying `b` then `rebase(a, over: b)`. Every
/// rule below keeps that promise; docs/merge.md lists them with examples.
enum MergeRules {
    /// `x` rewritten to apply after `y`, or `nil` when `x` loses to `y` and is dropped.
    static func rebase(_ x: MergeSide, over y: MergeSide) -> Instruction? {
        let xi = x.instruction, yi = y.instruction
        // Schema instructions are idempotent and commute with everything; different objects are
        // independent.
        guard let object = xi.object, yi.object == object else { return xi }
        switch (xi, yi) {
        case (.eraseObject, _): return xi
        case (_, .eraseObject): return nil               // erase beats every concurrent change, create included
        case (.createObject, _), (_, .createObject): return xi   // create is idempotent
        default: break
        }
        guard let xp = xi.fieldPath, let yp = yi.fieldPath else { return xi }

        if let change = yi.listChange {
            return rebase(x, xp, overListChange: change, of: yp, y)
        }
        switch yi {
        case .clear:
            // Clear beats every concurrent change inside the collection; a concurrent replacement of
            // the whole collection (a set of its path) beats the clear.
            guard xp.starts(with: yp) else { return xi }
            if case .set = xi, xp == yp { return xi }
            return nil
        case .mapErase(_, _, let key):
            let slot = yp + [.key(key)]
            if case .set = xi, xp == slot { return x.beats(y) ? xi : nil }   // last writer wins
            return xp.starts(with: slot) ? nil : xi
        case .set(_, _, let value):
            return rebase(x, xp, overSet: value, at: yp, y)
        case .addInteger(_, _, let delta):
            // Set against add: the set wins over earlier adds; a later add counts on top of it.
            guard case .set(let o, let p, let v) = xi, p == yp else { return xi }
            if x.beats(y) { return xi }
            guard case .int(let n) = v else { return xi }
            return .set(o, path: p, value: .int(n &+ delta))
        case .setInsert(_, _, let value), .setErase(_, _, let value):
            // Insert against erase of one value in one set: last writer wins.
            switch xi {
            case .setInsert(_, let p, let v), .setErase(_, let p, let v):
                guard p == yp, v == value, xi.isSetInsert != yi.isSetInsert else { return xi }
                return x.beats(y) ? xi : nil
            default: return xi
            }
        default:
            return xi
        }
    }

    private static func rebase(_ x: MergeSide, _ xp: [PathElement], overSet value: Value, at yp: [PathElement], _ y: MergeSide) -> Instruction? {
        let xi = x.instruction
        if case .mapErase(_, let m, let k) = xi, yp == m + [.key(k)] {
            return x.beats(y) ? xi : nil                 // map set against map erase: last writer wins
        }
        if xp == yp {
            switch xi {
            case .set, .addInteger: return x.beats(y) ? xi : nil
            default: return nil                          // a collection replaced as a whole
            }
        }
        // Replacing a value (an embedded object, a collection, a list element, a map value) beats
        // concurrent changes inside the old one.
        return xp.isStrictlyInside(yp) ? nil : xi
    }

    private static func rebase(_ x: MergeSide, _ xp: [PathElement], overListChange change: ListChange, of list: [PathElement], _ y: MergeSide) -> Instruction? {
        let xi = x.instruction
        if xp == list, let mine = xi.listChange {
            let winner = x.beats(y)
            return mine.rebased(over: change, selfFirstOnTie: !winner, selfWinsSameSource: winner)
                .map { xi.withListChange($0) }
        }
        // An instruction addressing an element (or something inside it) follows the element, and
        // is dropped with it when the element is erased.
        guard xp.isStrictlyInside(list), case .index(let j) = xp[list.count] else { return xi }
        guard let moved = change.map(j) else { return nil }
        var path = xp
        path[list.count] = .index(moved)
        return xi.withFieldPath(path)
    }
}

extension Instruction {
    var isSetInsert: Bool {
        if case .setInsert = self { return true }
        return false
    }
}
