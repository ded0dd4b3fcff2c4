import Foundation
import Hummingbird

/// Reading and writing the JSON bodies of the HTTP API.
enum JSONBody {
    /// The largest request body accepted.
    static let maxRequestSize = 1 << 20

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A response with `value` encoded as JSON.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A response with no body (`204`).
    static func empty(status: HTTPResponse.Status = .noContent) -> Response {
        Response(status: status)
    }

    /// Decodes the request's body; an empty body decodes as `{}`.
    /// - Throws: `ServerError.badRequest` when the body is not JSON of the expected shape.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, maxBytes: Int = maxRequestSize) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch {
            throw ServerError(.badRequest, "the request body is larger than \(maxBytes) bytes")
        }
        var data = Data(buffer.readableBytesView)
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { data = Data("{}".utf8) }
        guard JSONNesting.isWithin(data) else {
            throw ServerError(.badRequest, "the request body nests deeper than \(JSONNesting.maxDepth) levels")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw ServerError(.badRequest, "malformed request body: \(describe(error))")
        } catch {
            throw ServerError(.badRequest, "malformed request body")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing field \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "field \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case .dataCorrupted: "not valid JSON"
        @unknown default: "not valid JSON"
        }
    }
}
