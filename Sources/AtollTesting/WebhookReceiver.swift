import AtollCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The app's side of the server's e-mail/password and function webhooks, in a test: a small HTTP server on
/// 127.0.0.1 that records every POST and answers as the test says (a function's status, a hang,
/// a huge body).
///
/// ```swift
/// let mail = try await WebhookReceiver.start()
/// // server configured with deliveryURL: mail.url("/deliver")
/// let call = try #require(await mail.nextCall())
/// try await app.emailPasswordAuth.confirmUser(call.token!, tokenId: call.tokenId!)
/// ```
package final class WebhookReceiver: Sendable {
    /// One POST the server made.
    package struct Call: Sendable {
        package let path: String
        package let body: Data
        /// The `X-Atoll-Signature` header, if any.
        package let signature: String?

        package var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        package var purpose: String? { json["purpose"] as? String }
        package var username: String? { json["username"] as? String }
        package var token: String? { json["token"] as? String }
        package var tokenId: String? { json["tokenId"] as? String }
        package var arguments: [Any]? { json["arguments"] as? [Any] }
    }

    /// How the receiver answers.
    package enum Behavior: Sendable {
        /// 200 `{"status": status}` (a function's answer: "success", "pending", "fail").
        case status(String)
        /// 200 with an empty JSON object (a delivery's answer).
        case ok
        /// This HTTP status with an empty body.
        case httpStatus(Int)
        /// Holds the request until ``release()`` (at most a minute).
        case hang
        /// 200 with a body of this many bytes.
        case hugeBody(Int)
        /// 200 with the JSON text this returns for the call (a function's `{"result": …}`).
        case respond(@Sendable (Call) -> String)
    }

    private struct State {
        var calls: [Call] = []
        var taken = 0
        var behavior: Behavior = .ok
        var released = false
        var hanging = 0
    }

    private let state = Locked(State())
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// The receiver's port on 127.0.0.1.
    package let port: Int

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// `http://127.0.0.1:<port><path>`.
    package func url(_ path: String = "/hook") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts a receiver on a free port, answering with `behavior`.
    package static func start(_ behavior: Behavior = .ok) async throws -> WebhookReceiver {
        let box = Box()
        let router = Router()
        router.post("**") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let receiver = box.receiver else { return Response(status: .serviceUnavailable) }
            return try await receiver.answer(Call(
                path: request.uri.path, body: Data(body.readableBytesView),
                signature: request.headers.first { $0.name.canonicalName == "x-atoll-signature" }?.value))
        }
        let (port, group, task) = try await LoopbackHTTPServer.start(router, label: "webhook-receiver")
        let receiver = WebhookReceiver(port: port, group: group, task: task)
        receiver.setBehavior(behavior)
        box.receiver = receiver
        return receiver
    }

    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private weak var _receiver: WebhookReceiver?
        var receiver: WebhookReceiver? {
            get { lock.withLock { _receiver } }
            set { lock.withLock { _receiver = newValue } }
        }
    }

    /// Answers the next calls with `behavior`.
    package func setBehavior(_ behavior: Behavior) {
        state.withLock { $0.behavior = behavior }
    }

    /// Lets every hanging call answer (200 `{"status": "success"}`).
    package func release() {
        state.withLock { $0.released = true }
    }

    /// How many calls hang right now.
    package var hangingCalls: Int { state.withLock { $0.hanging } }

    /// Every call so far.
    package var calls: [Call] { state.withLock { $0.calls } }

    /// The next call not yet taken, waiting for it up to `timeout`.
    package func nextCall(timeout: Duration = .seconds(60)) async -> Call? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let call: Call? = state.withLock { state in
                guard state.taken < state.calls.count else { return nil }
                state.taken += 1
                return state.calls[state.taken - 1]
            }
            if let call { return call }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Stops the receiver (hanging calls are released first).
    package func stop() async throws {
        release()
        await group.triggerGracefulShutdown()
        try await task.value
    }

    private func answer(_ call: Call) async throws -> Response {
        let behavior = state.withLock { state in
            state.calls.append(call)
            return state.behavior
        }
        switch behavior {
        case .status(let status):
            return Self.json(#"{"status":"\#(status)"}"#)
        case .ok:
            return Self.json("{}")
        case .httpStatus(let code):
            return Response(status: .init(code: code))
        case .respond(let answer):
            return Self.json(answer(call))
        case .hugeBody(let bytes):
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: " "), count: bytes)))
        case .hang:
            state.withLock { $0.hanging += 1 }
            defer { state.withLock { $0.hanging -= 1 } }
            let deadline = ContinuousClock.now + .seconds(60)
            while !state.withLock({ $0.released }), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            return Self.json(#"{"status":"success"}"#)
        }
    }

    private static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
