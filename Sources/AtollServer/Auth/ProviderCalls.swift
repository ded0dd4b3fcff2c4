import AtollCore
import Foundation
import NIOHTTP1

/// The server's calls to identity providers (a provider's published keys, Google's token
/// endpoint, Facebook's Graph API): one bounded client (``WebhookClient``: one deadline, a cap on
/// the answer and on calls in flight, no redirects followed), and failures as the errors a client
/// is answered with. URLs were checked when the app was configured (https, or http on loopback).
///
/// ```swift
/// let answer = try await ProviderCalls.send(.GET, url, timeout: 10, what: "Facebook's Graph API")
/// ```
enum ProviderCalls {
    /// The largest answer read (keys, a token answer, a Graph API object are a few KiB).
    static let maxAnswerBytes = 64 * 1024
    static let client = WebhookClient(maxAnswerBytes: maxAnswerBytes, maxInFlight: 64)

    /// Sends the request (a `form` is sent URL-encoded) and returns the answer, whatever its status.
    /// - Throws: `ServerError(.authError)` naming `what` and the kind of failure (timeout, too
    ///   large, unreachable), `.tooManyRequests` when too many calls are in flight.
    static func send(_ method: HTTPMethod, _ url: String, form: [(String, String)]? = nil, timeout: TimeInterval,
                     what: String) async throws -> WebhookClient.Answer {
        do {
            return try await client.send(method, url, body: form.map { Data(formEncoded($0).utf8) },
                                         contentType: form == nil ? nil : "application/x-www-form-urlencoded", timeout: timeout)
        } catch let failure as WebhookClient.Failure {
            if failure.code == .busy {
                throw ServerError(.tooManyRequests, "too many identity provider calls in flight; try again in 1 s", retryAfter: 1)
            }
            throw ServerError(.authError, "\(what) \(failure.publicReason)")
        }
    }

    /// `name=value&…`, each percent-encoded but for RFC 3986's unreserved characters.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        fields.map { "\(percentEncoded($0.0))=\(percentEncoded($0.1))" }.joined(separator: "&")
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A short code from a provider's error answer (`invalid_grant`), letters, digits and `_` only.
    static func errorCode(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.count <= 64,
              text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else { return nil }
        return text
    }
}
