/// A structural change to a list, and how concurrent list changes shift each other's positions.
///
/// Moves follow `List.move(from:to:)`: the element at `from` ends at index `to`.
///
/// Positions come from clients, so any `Int` may appear (`Int.max`, negative): every shift
/// saturates instead of trapping. A position that was out of range stays out of range (it never
/// wraps into a valid one), so applying it changes nothing and ``ReplicaState/validate(_:)`` refuses it.
enum ListChange: Hashable, Sendable {
    case insert(Int)
    case erase(Int)
    case move(from: Int, to: Int)

    /// Where the element at `index` ends up after this change, or `nil` if this change erased it.
    /// For an insert, elements at or after the insertion point move one up.
    func map(_ index: Int) -> Int? {
        switch self {
        case .insert(let i): return i <= index ? index.up : index
        case .erase(let i): return i == index ? nil : (i < index ? index.down : index)
        case .move(let f, let t): return Self.moved(f, t, index)
        }
    }

    static func moved(_ f: Int, _ t: Int, _ j: Int) -> Int {
        if j == f { return t }
        let without = j > f ? j.down : j
        return without >= t ? without.up : without
    }

    /// This change, made concurrently with `other`, rewritten to apply after `other`; `nil` when
    /// it no longer has an effect.
    ///
    /// - Parameter selfFirstOnTie: whether this side's element goes first when two elements claim
    ///   the same slot (concurrent inserts at one index, or moves to one slot). The two calls of a
    ///   pair must pass opposite values.
    /// - Parameter selfWinsSameSource: for two moves of one element, whether this move wins.
    func rebased(over other: ListChange, selfFirstOnTie: Bool, selfWinsSameSource: Bool) -> ListChange? {
        switch (self, other) {
        case (.insert(let p), .insert(let q)):
            return .insert(q < p || (q == p && !selfFirstOnTie) ? p.up : p)
        case (.insert(let p), .erase(let q)):
            return .insert(q < p ? p.down : p)
        case (.insert(let p), .move(let f, let t)):
            // The new element's slot among the elements other than the moved one; at a tie with the
            // moved element's slot the new element goes first (both directions agree on this).
            let slot = f < p ? p.down : p
            return .insert(t < slot ? slot.up : slot)
        case (.erase(let p), _):
            return other.map(p).map { .erase($0) }
        case (.move(let f, let t), .insert(let p)):
            let slot = f < p ? p.down : p
            return .move(from: p <= f ? f.up : f, to: slot <= t ? t.up : t)
        case (.move(let f, let t), .erase(let e)):
            guard e != f else { return nil }
            let erasedAfterMove = Self.moved(f, t, e)
            return .move(from: e < f ? f.down : f, to: erasedAfterMove < t ? t.down : t)
        case (.move(let fa, let ta), .move(let fb, let tb)):
            if fa == fb { return selfWinsSameSource ? .move(from: tb, to: ta) : nil }
            // Slots of the two moved elements among all the others, then their final order.
            let slotA = Self.moved(fa, ta, fb) < ta ? ta.down : ta
            let slotB = Self.moved(fb, tb, fa) < tb ? tb.down : tb
            let finalA = slotB < slotA || (slotB == slotA && !selfFirstOnTie) ? slotA.up : slotA
            return .move(from: Self.moved(fb, tb, fa), to: finalA)
        }
    }
}

fileprivate extension Int {
    /// One more, saturating at `Int.max`: list positions are client input.
    var up: Int { self == .max ? .max : self + 1 }
    /// One less, saturating at `Int.min`.
    var down: Int { self == .min ? .min : self - 1 }
}
