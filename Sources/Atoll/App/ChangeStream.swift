import AtollCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a change stream (`collection.watch(delegate:)`) tells: it opened, an event arrived, an
/// error happened, it closed.
public protocol ChangeEventDelegate: AnyObject {
    func changeStreamDidOpen(_ changeStream: ChangeStream)
    func changeStreamDidClose(with error: Error?)
    func changeStreamDidReceive(error: Error)
    /// A MongoDB change event: `operationType` (`insert`, `update`, `delete`), `documentKey`,
    /// `fullDocument` (inserts and updates), `ns`.
    func changeStreamDidReceive(changeEvent: AnyBSON?)
}

/// An open change stream of a ``MongoCollection``: the server's changes to the documents the user
/// may read, as they happen, until ``close()``.
///
/// ```swift
/// let stream = tasks.watch(delegate: self, queue: .main)
/// stream.close()
/// ```
public final class ChangeStream: NSObject, @unchecked Sendable {
    /// Where events go (called through `schedule`).
    struct Handlers {
        var open: @Sendable (ChangeStream) -> Void
        var event: @Sendable (AnyBSON) -> Void
        var error: @Sendable (Error) -> Void
        var close: @Sendable (Error?) -> Void
    }

    private struct State {
        var session: URLSession?
        var task: URLSessionDataTask?
        var buffer = Data()
        var status = 0
        var finished = false
    }
    private let state = Locked(State())
    private let handlers: Handlers
    private let schedule: (@escaping @Sendable () -> Void) -> Void
    /// Most bytes one event may have before the stream is closed with an error.
    static let maxEventBytes = 16 << 20

    init(handlers: Handlers, schedule: @escaping (@escaping @Sendable () -> Void) -> Void) {
        self.handlers = handlers
        self.schedule = schedule
    }

    /// Stops the stream; the delegate hears `changeStreamDidClose(with: nil)`.
    public func close() {
        finish(nil)
    }

    func start(_ collection: MongoCollection, body: [String: AnyBSON]) {
        _Concurrency.Task {
            do {
                let user = collection.database.client.user
                let token = try await user.validAccessToken()
                let http = user.core.http
                let app = user.core.id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? user.core.id
                guard let url = URL(string: http.baseURL + "/api/client/v1/app/\(app)/mongodb/watch") else {
                    throw AppError(.invalidParameter, "the app's base URL does not make a URL")
                }
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.timeoutInterval = 365 * 86_400
                for (name, value) in RequestSettings.sendable(http.settings.headers) { request.setValue(value, forHTTPHeaderField: name) }
                request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.setValue("Bearer " + token, forHTTPHeaderField: http.settings.authorizationHeaderName ?? "Authorization")
                var fields = body.mapValues(ExtendedJSON.init)
                fields["service"] = .string(collection.database.client.name)
                fields["database"] = .string(collection.database.name)
                fields["collection"] = .string(collection.name)
                request.httpBody = try JSONEncoder().encode(fields)
                let configuration = URLSessionConfiguration.ephemeral
                configuration.timeoutIntervalForRequest = 365 * 86_400
                let session = URLSession(configuration: configuration, delegate: Delegate(self), delegateQueue: nil)
                let task = session.dataTask(with: request)
                let started: Bool = state.withLock { state in
                    guard !state.finished else { return false }
                    (state.session, state.task) = (session, task)
                    return true
                }
                if started { task.resume() } else { session.invalidateAndCancel() }
            } catch {
                finish(error)
            }
        }
    }

    /// Ends the stream once: cancels the request and tells the delegate.
    func finish(_ error: Error?) {
        let ending: (URLSession?, URLSessionDataTask?)? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            defer { (state.session, state.task) = (nil, nil) }
            return (state.session, state.task)
        }
        guard let (session, task) = ending else { return }
        task?.cancel()
        session?.invalidateAndCancel()
        let handlers = handlers
        schedule { handlers.close(error) }
    }

    // MARK: The response, as it arrives

    fileprivate func received(status: Int) {
        state.withLock { $0.status = status }
        if status == 200 {
            let handlers = handlers
            schedule { handlers.open(self) }
        }
    }

    fileprivate func received(_ data: Data) {
        var events: [(String?, Data)] = []
        let (ok, overflow): (Bool, Bool) = state.withLock { state in
            state.buffer.append(data)
            guard state.status == 200 else { return (false, state.buffer.count > 1 << 20) }
            // Events end with a blank line.
            while let end = state.buffer.range(of: Data("\n\n".utf8)) {
                let block = state.buffer.subdata(in: state.buffer.startIndex..<end.lowerBound)
                state.buffer.removeSubrange(state.buffer.startIndex..<end.upperBound)
                var name: String?
                var payload = Data()
                for line in block.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                    if line.starts(with: Data("data:".utf8)) {
                        payload.append(Data(line.dropFirst(5)))
                    } else if line.starts(with: Data("event:".utf8)) {
                        name = String(decoding: line.dropFirst(6), as: UTF8.self).trimmingCharacters(in: .whitespaces)
                    }
                }
                if !payload.isEmpty { events.append((name, payload)) }
            }
            return (true, state.buffer.count > Self.maxEventBytes)
        }
        guard ok else {
            if overflow { finish(AppError(.httpRequestFailed, "the server's error answer to watch is too large")) }
            return
        }
        let handlers = handlers
        for (name, payload) in events {
            guard let json = try? JSONDecoder().decode(ExtendedJSON.self, from: payload) else {
                schedule { handlers.error(AppError(.httpRequestFailed, "a change event is not extended JSON")) }
                continue
            }
            if name == "error" {
                let message = json.bson.documentValue?["error"]??.stringValue ?? "the change stream failed"
                let error = AppError(.mongoDBError, message)
                schedule { handlers.error(error) }
                finish(error)
                return
            }
            let event = json.bson
            schedule { handlers.event(event) }
        }
        if overflow { finish(AppError(.httpRequestFailed, "a change event is larger than \(Self.maxEventBytes) bytes")) }
    }

    fileprivate func completed(_ error: Error?) {
        let (status, body) = state.withLock { ($0.status, $0.buffer) }
        if status != 200 {
            let answer = try? JSONDecoder().decode(HTTPClient.ErrorBody.self, from: body)
            let code = answer?.error_code.map(AppError.code(forServerCode:)) ?? (status == 401 ? .invalidSession : .httpRequestFailed)
            finish(error.map { AppError(.httpRequestFailed, "watch failed: \($0)") }
                   ?? AppError(code, answer?.error ?? "the server answered \(status) to watch", httpStatusCode: status))
        } else {
            finish(error.map { AppError(.httpRequestFailed, "the change stream ended: \($0)") })
        }
    }

    /// URLSession's delegate (the session keeps it until it is invalidated).
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let stream: ChangeStream
        init(_ stream: ChangeStream) { self.stream = stream }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
            stream.received(status: (response as? HTTPURLResponse)?.statusCode ?? 0)
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            stream.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            stream.completed(error)
        }
    }
}

extension MongoCollection {
    /// Opens a change stream of the collection; `delegate` hears its events on `queue`.
    public func watch(delegate: ChangeEventDelegate, queue: DispatchQueue = .main) -> ChangeStream {
        watch(body: [:], delegate: delegate, queue: queue)
    }

    /// A change stream of the events `matchFilter` matches (`operationType`, `fullDocument.<field>`).
    public func watch(matchFilter: Document, delegate: ChangeEventDelegate, queue: DispatchQueue = .main) -> ChangeStream {
        watch(body: ["filter": .document(matchFilter)], delegate: delegate, queue: queue)
    }

    /// A change stream of the documents whose `_id` is one of `filterIds`.
    public func watch(filterIds: [ObjectId], delegate: ChangeEventDelegate, queue: DispatchQueue = .main) -> ChangeStream {
        watch(body: ["ids": .array(filterIds.map { .objectId($0) })], delegate: delegate, queue: queue)
    }

    private func watch(body: [String: AnyBSON], delegate: ChangeEventDelegate, queue: DispatchQueue) -> ChangeStream {
        // Held weakly, as realm-swift does.
        let box = WeakDelegate(delegate)
        let stream = ChangeStream(handlers: .init(
            open: { box.delegate?.changeStreamDidOpen($0) },
            event: { box.delegate?.changeStreamDidReceive(changeEvent: $0) },
            error: { box.delegate?.changeStreamDidReceive(error: $0) },
            close: { box.delegate?.changeStreamDidClose(with: $0) }
        ), schedule: { queue.async(execute: $0) })
        stream.start(self, body: body)
        return stream
    }

    /// Opens a change stream whose events `handlers` receive through `schedule`.
    func openChangeStream(filterIds: [ObjectId]?, matchFilter: Document?, handlers: ChangeStream.Handlers,
                          schedule: @escaping (@escaping @Sendable () -> Void) -> Void) -> ChangeStream {
        var body: [String: AnyBSON] = [:]
        if let filterIds { body["ids"] = .array(filterIds.map { .objectId($0) }) }
        if let matchFilter { body["filter"] = .document(matchFilter) }
        let stream = ChangeStream(handlers: handlers, schedule: schedule)
        stream.start(self, body: body)
        return stream
    }

    /// The collection's change events as an async sequence; the stream closes when the loop ends.
    ///
    /// ```swift
    /// for try await event in tasks.changeEvents(onOpen: { print("open") }) { … }
    /// ```
    public var changeEvents: AsyncThrowingStream<AnyBSON, Error> { changeEvents(filterIds: nil, matchFilter: nil, onOpen: nil) }

    public func changeEvents(onOpen: @Sendable @escaping () -> Void) -> AsyncThrowingStream<AnyBSON, Error> {
        changeEvents(filterIds: nil, matchFilter: nil, onOpen: onOpen)
    }

    public func changeEvents(filterIds: [ObjectId], onOpen: (@Sendable () -> Void)? = nil) -> AsyncThrowingStream<AnyBSON, Error> {
        changeEvents(filterIds: filterIds, matchFilter: nil, onOpen: onOpen)
    }

    public func changeEvents(matchFilter: Document, onOpen: (@Sendable () -> Void)? = nil) -> AsyncThrowingStream<AnyBSON, Error> {
        changeEvents(filterIds: nil, matchFilter: matchFilter, onOpen: onOpen)
    }

    private func changeEvents(filterIds: [ObjectId]?, matchFilter: Document?, onOpen: (@Sendable () -> Void)?) -> AsyncThrowingStream<AnyBSON, Error> {
        AsyncThrowingStream { continuation in
            let stream = openChangeStream(filterIds: filterIds, matchFilter: matchFilter, handlers: .init(
                open: { _ in onOpen?() },
                event: { continuation.yield($0) },
                error: { continuation.finish(throwing: $0) },
                close: { error in if let error { continuation.finish(throwing: error) } else { continuation.finish() } }
            ), schedule: { $0() })
            continuation.onTermination = { _ in stream.close() }
        }
    }
}

/// A change stream's delegate, held weakly; its calls arrive on the queue the app chose.
private final class WeakDelegate: @unchecked Sendable {
    weak var delegate: ChangeEventDelegate?
    init(_ delegate: ChangeEventDelegate) { self.delegate = delegate }
}
