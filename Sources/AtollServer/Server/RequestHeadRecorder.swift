import AtollCore
import Atomics
import Foundation
import HTTPTypes
import Hummingbird

/// Tests only: records the heads of the requests the server receives (HTTP API requests and
/// WebSocket upgrade requests) while recording is on, so a test can read back what a client
/// sent (custom headers, user agent). Off, it costs one atomic load per request.
///
/// ```swift
/// server.requestHeads.start()
/// … let heads = server.requestHeads.recorded
/// ```
package final class RequestHeadRecorder: Sendable {
    /// One request's head.
    package struct Head: Sendable, Hashable {
        package var method: String
        package var path: String
        /// Header names lowercased; a repeated header's values joined with ", ".
        package var headers: [String: String]
    }

    private let isOn = ManagedAtomic<Bool>(false)
    private let heads = Locked<[Head]>([])
    /// At most this many heads are kept (the oldest are dropped).
    static let capacity = 500

    init() {}

    /// Starts recording (and forgets what was recorded before).
    package func start() {
        heads.withLock { $0 = [] }
        isOn.store(true, ordering: .releasing)
    }

    package func stop() { isOn.store(false, ordering: .releasing) }

    /// The heads recorded since `start()`, oldest first.
    package var recorded: [Head] { heads.withLock { $0 } }

    func record(_ request: Request) {
        guard isOn.load(ordering: .acquiring) else { return }
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        let head = Head(method: request.method.rawValue, path: request.uri.path, headers: headers)
        heads.withLock { heads in
            heads.append(head)
            if heads.count > Self.capacity { heads.removeFirst(heads.count - Self.capacity) }
        }
    }
}

/// Records request heads for ``RequestHeadRecorder`` (first of the router's middleware).
struct RequestHeadMiddleware<Context: RequestContext>: RouterMiddleware {
    let recorder: RequestHeadRecorder

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        recorder.record(request)
        return try await next(request, context)
    }
}
