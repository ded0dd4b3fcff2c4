#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

/// The app's functions, called by name as members: each name is a function the server maps to a
/// webhook (docs/server.md, "Functions"). Arguments and the result travel as extended JSON.
///
/// ```swift
/// let sum = try await user.functions.sum(1, 2, 3)          // AnyBSON
/// user.functions.sum([1, 2, 3]) { sum, error in print(sum ?? .null, error ?? "") }
/// ```
@dynamicMemberLookup
public struct Functions: Sendable {
    let user: User

    /// What a completion-handler call hands back: the result or the error.
    public typealias FunctionCompletionHandler = @Sendable (AnyBSON?, Error?) -> Void
    /// A function called with its arguments and a completion handler.
    public typealias Function = @Sendable ([AnyBSON], @escaping FunctionCompletionHandler) -> Void
    /// What a `Result` completion-handler call hands back.
    public typealias ResultFunctionCompletionHandler = @Sendable (Result<AnyBSON, Error>) -> Void
    /// A function called with its arguments and a `Result` completion handler.
    public typealias ResultFunction = @Sendable ([AnyBSON], @escaping ResultFunctionCompletionHandler) -> Void

    /// `user.functions.name(arguments) { bson, error in … }`.
    public subscript(dynamicMember name: String) -> Function {
        { [user] arguments, completion in
            _Concurrency.Task {
                do { completion(try await user.callFunction(named: name, arguments: arguments), nil) } catch { completion(nil, error) }
            }
        }
    }

    /// `user.functions.name(arguments) { result in … }`.
    @preconcurrency
    public subscript(dynamicMember name: String) -> ResultFunction {
        { [user] arguments, completion in
            _Concurrency.Task {
                do { completion(.success(try await user.callFunction(named: name, arguments: arguments))) } catch { completion(.failure(error)) }
            }
        }
    }

    /// `try await user.functions.name(1, 2)`, or a `Future` of it outside async code.
    public subscript(dynamicMember name: String) -> FunctionCallable {
        FunctionCallable(name: name, user: user)
    }
}

/// A function of ``Functions`` called like a Swift function: `try await user.functions.sum(1, 2)`.
@dynamicCallable
public struct FunctionCallable: Sendable {
    let name: String
    let user: User

    // The `[AnyBSON]` forms are disfavored only where a call fits both forms with the same
    // literals: `f()`, which realm-swift's shapes left ambiguous. `f([1, 2])` already took the
    // `[[AnyBSON]]` form there (an array literal's own type wins), and still does.

    /// The result of the function called with `args`.
    @_disfavoredOverload
    public func dynamicallyCall(withArguments args: [AnyBSON]) async throws -> AnyBSON {
        try await user.callFunction(named: name, arguments: args)
    }

    /// :nodoc:
    @available(*, deprecated, message: "Specify args separately without wrapping them in an array")
    public func dynamicallyCall(withArguments args: [[AnyBSON]]) async throws -> AnyBSON {
        try await user.callFunction(named: name, arguments: args.first ?? [])
    }

    /// A `Future` of the function called with `args` (the call starts at once).
    @_disfavoredOverload
    public func dynamicallyCall(withArguments args: [AnyBSON]) -> Future<AnyBSON, Error> {
        future { [user, name] in try await user.callFunction(named: name, arguments: args) }
    }

    /// :nodoc:
    @available(*, deprecated, message: "Specify args separately without wrapping them in an array")
    public func dynamicallyCall(withArguments args: [[AnyBSON]]) -> Future<AnyBSON, Error> {
        let args = args.first ?? []
        return future { [user, name] in try await user.callFunction(named: name, arguments: args) }
    }
}

extension User {
    /// Calls the app's functions: `try await user.functions.sum(1, 2)`.
    public var functions: Functions { Functions(user: self) }

    /// Calls the function `name` with `arguments` and returns its result.
    ///
    /// - Throws: `AppError`: `.functionNotFound` for a name the app does not have,
    ///   `.notCallable` for a private function or one the user may not call,
    ///   `.functionExecutionError` with the function's own message when it fails,
    ///   `.executionTimeLimitExceeded`, `.invalidSession` when the user is logged out.
    func callFunction(named name: String, arguments: [AnyBSON]) async throws -> AnyBSON {
        let body = try ExtendedJSON.canonicalData(.document(["name": .string(name), "arguments": .array(arguments)]))
        let data = try await authorized("POST", "/api/client/v1/app/\(core.id)/functions/call", body: body)
        return try core.http.decode(ExtendedJSON.self, from: data, "function \(name)").bson
    }
}
