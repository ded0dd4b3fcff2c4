import Foundation
import Hummingbird

/// The e-mail/password provider's confirmation and reset routes, at App Services' paths under
/// `/api/client/v1/app/{app}/auth/providers/local-userpass/` (docs/protocol.md §1).
extension AuthRoutes {
    func addEmailPasswordRoutes(to client: RouterGroup<AtollRequestContext>) {
        let provider = "app/:app/auth/providers/local-userpass"
        client.post("\(provider)/confirm") { request, context in
            let body = try await JSONBody.decode(TokenBody.self, from: request)
            try await auth.confirmUser(appID: try context.parameters.require("app"), token: body.token, tokenID: body.tokenId)
            return JSONBody.empty(status: .ok)
        }
        client.post("\(provider)/confirm/send") { request, context in
            let body = try await JSONBody.decode(EmailBody.self, from: request)
            try await auth.resendConfirmation(
                appID: try context.parameters.require("app"), email: body.email, clientAddress: clientAddress(request, context))
            return JSONBody.empty(status: .ok)
        }
        client.post("\(provider)/confirm/call") { request, context in
            let body = try await JSONBody.decode(EmailBody.self, from: request)
            try await auth.retryCustomConfirmation(
                appID: try context.parameters.require("app"), email: body.email, clientAddress: clientAddress(request, context))
            return JSONBody.empty(status: .ok)
        }
        client.post("\(provider)/reset/send") { request, context in
            let body = try await JSONBody.decode(EmailBody.self, from: request)
            try await auth.sendPasswordReset(
                appID: try context.parameters.require("app"), email: body.email, clientAddress: clientAddress(request, context))
            return JSONBody.empty(status: .ok)
        }
        client.post("\(provider)/reset") { request, context in
            let body = try await JSONBody.decode(ResetBody.self, from: request)
            try await auth.resetPassword(
                appID: try context.parameters.require("app"), token: body.token, tokenID: body.tokenId, password: body.password)
            return JSONBody.empty(status: .ok)
        }
        client.post("\(provider)/reset/call") { request, context in
            let body = try await JSONBody.decode(ResetCallBody.self, from: request)
            let arguments = body.arguments ?? []
            guard arguments.count <= 32, (try? JSONBody.encoder.encode(arguments).count) ?? .max <= Self.maxArgumentBytes else {
                throw ServerError(.badRequest, "the reset function's arguments are more than 32 values or \(Self.maxArgumentBytes) bytes")
            }
            try await auth.callResetFunction(
                appID: try context.parameters.require("app"), email: body.email, password: body.password, arguments: arguments,
                clientAddress: clientAddress(request, context))
            return JSONBody.empty(status: .ok)
        }
    }

    /// The largest reset function arguments passed on, in bytes of JSON.
    static let maxArgumentBytes = 16 * 1024

    struct TokenBody: Decodable {
        var token: String
        var tokenId: String
    }

    struct EmailBody: Decodable {
        var email: String
    }

    struct ResetBody: Decodable {
        var password: String
        var token: String
        var tokenId: String
    }

    struct ResetCallBody: Decodable {
        var email: String
        var password: String
        var arguments: [JSONValue]?
    }
}
