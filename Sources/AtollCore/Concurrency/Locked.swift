#if canImport(Darwin)
import os
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#elseif canImport(WinSDK)
import WinSDK
#endif

/// A value guarded by a lock: what the standard library's `Mutex` is, on every OS version Atoll
/// supports (`Mutex` needs macOS 15 / iOS 18; Realm apps target iOS 16).
///
/// ```swift
/// let pending = Locked<[Int]>([])
/// pending.withLock { $0.append(1) }
/// let count = pending.withLock { $0.count }
/// ```
///
/// `os_unfair_lock` on Apple platforms, a `pthread_mutex_t` elsewhere (an `SRWLOCK` on Windows), each
/// at a fixed heap address as they require. Not recursive: calling `withLock` again from inside its
/// body deadlocks, as `Mutex` does.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    #if canImport(Darwin)
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    #elseif canImport(WinSDK)
    private let lock: UnsafeMutablePointer<SRWLOCK>
    #else
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    private var value: Value

    /// A lock guarding `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        value = initialValue
        lock = .allocate(capacity: 1)
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #elseif canImport(WinSDK)
        InitializeSRWLock(lock)
        #else
        lock.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(lock, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    deinit {
        #if !canImport(Darwin) && !canImport(WinSDK)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the lock held and the value to read or change; returns what `body` returns.
    ///
    /// - Complexity: O(1) plus `body`.
    @inlinable
    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        _lock()
        defer { _unlock() }
        return try _withValue(body)
    }

    @usableFromInline
    func _withValue<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try body(&value)
    }

    @usableFromInline
    func _lock() {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        #elseif canImport(WinSDK)
        AcquireSRWLockExclusive(lock)
        #else
        let result = pthread_mutex_lock(lock)
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
        #endif
    }

    @usableFromInline
    func _unlock() {
        #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
        #elseif canImport(WinSDK)
        ReleaseSRWLockExclusive(lock)
        #else
        let result = pthread_mutex_unlock(lock)
        precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
        #endif
    }
}
