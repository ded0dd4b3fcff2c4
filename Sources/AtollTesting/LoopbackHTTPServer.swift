import Hummingbird
import Logging
import ServiceLifecycle

/// A test's HTTP stand-in (a webhook receiver, a fake identity provider): `router` served on
/// 127.0.0.1 at a free port, until its service group is shut down.
///
/// ```swift
/// let (port, group, task) = try await LoopbackHTTPServer.start(router, label: "fake-provider")
/// ```
enum LoopbackHTTPServer {
    static func start(_ router: Router<BasicRequestContext>, label: String) async throws -> (port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        logger.logLevel = .warning
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return (port, group, task)
    }
}
