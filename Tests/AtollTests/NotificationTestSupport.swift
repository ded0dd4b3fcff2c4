import Atoll
import AtollCore
import AtollTesting
import Foundation
import Testing

/// What a results observer saw, as plain values a test can compare.
enum SeenChange: Equatable, Sendable, CustomStringConvertible {
    case initial(count: Int)
    case update(deletions: [Int], insertions: [Int], modifications: [Int])
    case error

    init<C: Collection>(_ change: RealmCollectionChange<C>) {
        switch change {
        case .initial(let results): self = .initial(count: results.count)
        case .update(_, let d, let i, let m): self = .update(deletions: d, insertions: i, modifications: m)
        case .error: self = .error
        }
    }

    var description: String {
        switch self {
        case .initial(let count): ".initial(\(count))"
        case .update(let d, let i, let m): ".update(d: \(d), i: \(i), m: \(m))"
        case .error: ".error"
        }
    }
}

/// What an object observer saw: property names with old and new values rendered as text.
enum SeenObjectChange: Equatable, Sendable {
    case change([PropertyValues])
    case deleted
    case error

    struct PropertyValues: Equatable, Sendable {
        let name: String
        let old: String
        let new: String
        init(_ name: String, _ old: String, _ new: String) { (self.name, self.old, self.new) = (name, old, new) }
    }

    init<T>(_ change: ObjectChange<T>) {
        switch change {
        case .change(_, let properties):
            self = .change(properties.map { PropertyValues($0.name, Self.text($0.oldValue), Self.text($0.newValue)) })
        case .deleted: self = .deleted
        case .error: self = .error
        }
    }

    static func text(_ value: Any?) -> String {
        guard let value else { return "nil" }
        if case Optional<Any>.none = value { return "nil" }
        return "\(value)"
    }
}

extension Recorder {
    var count: Int { all.count }
}

/// Lets a non-Sendable value (a realm, an object) cross into a closure in tests that check
/// what happens when it is used where it must not be.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

enum WaitError: Error { case timedOut(String) }

/// Runs `body` to completion on a new thread and returns its result; fails after `timeout`.
func onAnotherThread<T: Sendable>(timeout: TimeInterval = 10, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + timeout) == .success else { throw WaitError.timedOut("thread did not finish") }
    return try result.withLock { $0! }.get()
}

/// Runs `body` on a new thread without waiting for it in a blocking way.
func onAnotherThread<T: Sendable>(timeout: Duration = .seconds(10), _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    Thread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
    }.start()
    guard await waitUntil(timeout: timeout, { result.withLock { $0 != nil } }) else {
        throw WaitError.timedOut("thread did not finish")
    }
    return try result.withLock { $0! }.get()
}

extension TestRealm {
    /// Adds dogs with the given names and ages in one write of a fresh realm on this thread.
    func seedDogs(_ dogs: [(String, Int)]) throws {
        let realm = try open()
        try realm.write {
            for (name, age) in dogs { realm.add(Dog(value: ["name": name, "age": age])) }
        }
    }

    /// Checks that no realm of this configuration is still open (observers and tokens released).
    func expectAllRealmsClosed(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: Never.self, "a realm of the test is still open", sourceLocation: sourceLocation) {
            try Realm.deleteFiles(for: configuration)
        }
    }
}

/// The result of `body`, or `WaitError.timedOut` once `timeout` passes (the body is cancelled).
func withTimeout<T: Sendable>(_ timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await _Concurrency.Task.sleep(for: timeout)
            throw WaitError.timedOut("no result within \(timeout)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
