import AtollCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// The default transport through `URLSession`: on Apple platforms, where a session's delegate can
/// evaluate the server's trust against the app's roots (``TrustEvaluator``), and wherever the NIO
/// transport is not built (then with the system's roots only).
enum URLSessionTransport {
    static func send(_ request: RLMRequest, completion: @escaping RLMNetworkTransportCompletionBlock) {
        guard let url = URL(string: request.url) else {
            completion(RLMNetworkTransport.failure(-1, "'\(request.url)' is not a valid URL"))
            return
        }
        let session: URLSession
        do {
            session = try self.session(trusting: request.trustedRootCertificates)
        } catch {
            completion(RLMNetworkTransport.failure(-1, "\(error)"))
            return
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = "\(request.method)"
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body.utf8) }
        session.dataTask(with: urlRequest) { data, response, error in
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
            completion(answer)
        }.resume()
    }

    /// The SDK's own sessions, one per set of trusted roots (an app configuration's): not
    /// `URLSession.shared`, whose 6 connections per host a few slow requests (a server waiting on a
    /// webhook) use up for every app of the process.
    private static let sessions = Locked<[[String]: URLSession]>([:])

    static func session(trusting pems: [String]) throws -> URLSession {
        if let session = sessions.withLock({ $0[pems] }) { return session }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        #if canImport(Security)
        let delegate = try TrustEvaluator(anchors: TrustedRoots.derCertificates(pems))
        #else
        // No trust evaluation to hook here: the NIO transport is the one that trusts the app's roots.
        let delegate: URLSessionDelegate? = nil
        #endif
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        return sessions.withLock { sessions in
            if let existing = sessions[pems] { return existing }
            sessions[pems] = session
            return session
        }
    }
}

#if canImport(Security)
/// Trusts a server whose chain ends at one of the system's roots or at one of the app's
/// (`AppConfiguration.trustedRootCertificates`), for the host the request named: what NIOSSL's
/// `additionalTrustRoots` does for the sync connection. Refuses redirects, as the NIO transport
/// does: the 3xx answer is the response, and a bearer token never goes to another host.
final class TrustEvaluator: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    /// Immutable after `init`.
    private let anchors: [SecCertificate]

    init(anchors der: [Data]) throws {
        var anchors: [SecCertificate] = []
        for (index, certificate) in der.enumerated() {
            guard let anchor = SecCertificateCreateWithData(nil, certificate as CFData) else {
                throw TrustedRoots.Failure(index: index)
            }
            anchors.append(anchor)
        }
        self.anchors = anchors
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge) async
        -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard !anchors.isEmpty, challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
        // The trust already holds the SSL policy for the request's host name.
        guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
              SecTrustSetAnchorCertificatesOnly(trust, false) == errSecSuccess,  // the system's roots too
              SecTrustEvaluateWithError(trust, nil) else { return (.cancelAuthenticationChallenge, nil) }
        return (.useCredential, URLCredential(trust: trust))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest) async -> URLRequest? {
        nil
    }
}
#endif
