import Foundation
import Hummingbird

extension AuthRoutes {
    /// `POST /api/client/v1/app/{app}/functions/call` with an access token and
    /// `{"name", "arguments": [extended JSON]}`: the function's result as extended JSON
    /// (docs/protocol.md §1). The user is checked before the body is read, and the body is read
    /// only up to the app's ``ServerConfiguration/Functions/maxArgumentBytes``.
    func addFunctionRoutes(to client: RouterGroup<AtollRequestContext>) {
        client.post("app/:app/functions/call") { request, context in
            let appID = try context.parameters.require("app")
            let token = try bearer(request)
            // Cheap refusals first: a bad token costs no body read.
            _ = try await auth.accessTokens.verify(token, now: auth.now())
            let limit = auth.apps.settings(forApp: appID).functions.maxArgumentBytes
            let buffer: ByteBuffer
            do {
                buffer = try await request.body.collect(upTo: limit)
            } catch {
                throw ServerError(.badRequest, "the function call is larger than \(limit) bytes")
            }
            let result = try await auth.callFunction(appID: appID, accessToken: token, body: Data(buffer.readableBytesView))
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: result)))
        }
    }
}
