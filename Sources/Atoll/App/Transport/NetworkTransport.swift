import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The method of an app request.
public enum RLMHTTPMethod: Int32, Sendable {
    case GET = 0, POST = 1, PATCH = 2, PUT = 3, DELETE = 4

    init(name: String) {
        self = switch name {
        case "POST": .POST
        case "PATCH": .PATCH
        case "PUT": .PUT
        case "DELETE": .DELETE
        default: .GET
        }
    }
}

/// One request of the app API, as a transport sends it.
public final class RLMRequest: @unchecked Sendable {
    public var method: RLMHTTPMethod = .GET
    public var url = ""
    /// Seconds.
    public var timeout: TimeInterval = 60
    public var headers: [String: String] = [:]
    public var body = ""
    /// The app's `trustedRootCertificates`, set by the app on each request: the default transport
    /// trusts them besides the system's roots, as the sync connection does. A subclass that
    /// passes the request on to `super` keeps them.
    var trustedRootCertificates: [String] = []

    public init() {}
}

/// A transport's answer; a non-zero `customStatusCode` says the request never got one (a
/// network failure), with `body` the reason.
public final class RLMResponse: @unchecked Sendable {
    public var httpStatusCode = 0
    public var customStatusCode = 0
    public var headers: [String: String] = [:]
    public var body = ""

    public init() {}
}

public typealias RLMNetworkTransportCompletionBlock = @Sendable (RLMResponse) -> Void

/// What sends the app's HTTP requests (logins, token refreshes, API keys…; sync has its own
/// connection). Apps pass a subclass of ``RLMNetworkTransport`` as
/// `AppConfiguration(transport:)` to log, sign or route requests.
public protocol RLMNetworkTransportProtocol: AnyObject, Sendable {
    func sendRequest(toServer request: RLMRequest, completion completionBlock: @escaping RLMNetworkTransportCompletionBlock)
}

/// The transport an app uses by default. It trusts the system's roots and the app's
/// `AppConfiguration.trustedRootCertificates`, as the sync connection does: on Apple platforms
/// through `URLSession`, elsewhere through an HTTP/1.1 client on SwiftNIO and NIOSSL (URLSession
/// there cannot take trust roots). Subclass it to see or change requests.
///
/// ```swift
/// final class LoggingTransport: RLMNetworkTransport {
///     override func sendRequest(toServer request: RLMRequest, completion: @escaping RLMNetworkTransportCompletionBlock) {
///         print(request.url)
///         super.sendRequest(toServer: request, completion: completion)
///     }
/// }
/// let app = App(id: "tasks", configuration: AppConfiguration(baseURL: url, transport: LoggingTransport()))
/// ```
open class RLMNetworkTransport: RLMNetworkTransportProtocol, @unchecked Sendable {
    public init() {}

    open func sendRequest(toServer request: RLMRequest, completion completionBlock: @escaping RLMNetworkTransportCompletionBlock) {
        #if !canImport(Security) && canImport(AsyncHTTPClient)
        _Concurrency.Task { completionBlock(await NIOHTTPTransport.send(request)) }
        #else
        URLSessionTransport.send(request, completion: completionBlock)
        #endif
    }

    /// A response that never reached the server: `customStatusCode` (URLSession's error codes
    /// where one fits, else -1) and the reason as body.
    static func failure(_ code: Int, _ reason: String) -> RLMResponse {
        let response = RLMResponse()
        response.customStatusCode = code
        response.body = reason
        return response
    }
}

extension RLMNetworkTransport: Hashable {
    /// Transports are equal when they are the same object (as Objective-C's `isEqual:`).
    public static func == (lhs: RLMNetworkTransport, rhs: RLMNetworkTransport) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
