import Atomics

// The standard library's `Atomic` (macOS 15 / iOS 18) names its read-modify-write operations
// `add`, `subtract`, `wrappingAdd`, `bitwiseOr`, each returning `(oldValue:newValue:)`; swift-atomics
// names them `loadThenWrappingIncrement(by:)` and so on. These keep Atoll's call sites in the
// standard library's terms on `ManagedAtomic`, still lock-free.

extension ManagedAtomic where Value: AtomicInteger {
    /// Adds `operand`, trapping on overflow as the standard library's `Atomic.add` does.
    @_semantics("atomics.requires_constant_orderings") @_transparent @discardableResult
    package func add(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = loadThenWrappingIncrement(by: operand, ordering: ordering)
        let (new, overflow) = old.addingReportingOverflow(operand)
        precondition(!overflow, "arithmetic overflow")
        return (old, new)
    }

    /// Subtracts `operand`, trapping on overflow as the standard library's `Atomic.subtract` does.
    @_semantics("atomics.requires_constant_orderings") @_transparent @discardableResult
    package func subtract(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = loadThenWrappingDecrement(by: operand, ordering: ordering)
        let (new, overflow) = old.subtractingReportingOverflow(operand)
        precondition(!overflow, "arithmetic overflow")
        return (old, new)
    }

    /// Adds `operand`, wrapping around on overflow.
    @_semantics("atomics.requires_constant_orderings") @_transparent @discardableResult
    package func wrappingAdd(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = loadThenWrappingIncrement(by: operand, ordering: ordering)
        return (old, old &+ operand)
    }

    /// Sets the bits of `operand`.
    @_semantics("atomics.requires_constant_orderings") @_transparent @discardableResult
    package func bitwiseOr(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = loadThenBitwiseOr(with: operand, ordering: ordering)
        return (old, old | operand)
    }
}
