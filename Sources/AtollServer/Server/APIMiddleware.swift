import Hummingbird
import Logging

/// Turns every error into the API's JSON error answer and counts every answer in the metrics.
struct APIMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as ServerError {
            response = try error.response(from: request, context: context)
        } catch let error as HTTPError {
            response = try Self.translate(error).response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            response = try ServerError(.internalError, "the server failed to answer this request")
                .response(from: request, context: context)
        }
        metrics.countRequest(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code)
        return response
    }

    static func translate(_ error: HTTPError) -> ServerError {
        let message = error.body ?? error.status.reasonPhrase
        switch error.status.code {
        case 404: return ServerError(.notFound, "no such endpoint")
        case 401: return ServerError(.invalidToken, message)
        case 400..<500: return ServerError(.badRequest, message)
        default: return ServerError(.internalError, message)
        }
    }
}
