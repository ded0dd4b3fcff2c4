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

/// The transport an app uses by default: `URLSession`. Subclass it to see or change requests.
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
        guard let url = URL(string: request.url) else {
            let response = RLMResponse()
            response.customStatusCode = -1
            response.body = "'\(request.url)' is not a valid URL"
            completionBlock(response)
            return
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = "\(request.method)"
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body.utf8) }
        HTTPClient.session.dataTask(with: urlRequest) { data, response, error in
            let answer = RLMResponse()
            if let error {
                answer.customStatusCode = (error as NSError).code == 0 ? -1 : (error as NSError).code
                answer.body = error.localizedDescription
            } else if let http = response as? HTTPURLResponse {
                answer.httpStatusCode = http.statusCode
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { answer.headers[name] = value }
                }
                answer.body = String(decoding: data ?? Data(), as: UTF8.self)
            } else {
                answer.customStatusCode = -1
                answer.body = "no HTTP answer"
            }
            completionBlock(answer)
        }.resume()
    }
}

extension RLMNetworkTransport: Hashable {
    /// Transports are equal when they are the same object (as Objective-C's `isEqual:`).
    public static func == (lhs: RLMNetworkTransport, rhs: RLMNetworkTransport) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
