import RoostCore
import RoostHTTP
import RoostJSON

/// `POST /ff/refresh`: a refresh token exchanged for a new access token and refresh token.
struct RefreshRoutes: Sendable {
    let accounts: AccountService

    func register(in routes: APIRoutes) {
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError.accountBodyTooLarge
        }
        routes.open.on(.post, "/ff/refresh", admit: small) { request, _ in
            let body = try ObjectRoutes.bodyObject(request)
            guard let value = body["refreshToken"] else { throw RoostError.missingField("refreshToken") }
            guard let secret = value.stringValue else {
                throw RoostError.invalidField("refreshToken", "refreshToken must be a string.")
            }
            let token = try await accounts.refresh(secret: secret)
            var answer = Array(#"{"token":"#.utf8) + JSONWriter.bytes(.string(token.secret))
            answer += Array(#","tokenId":"#.utf8) + JSONWriter.bytes(.string(token.record.id))
            answer += Array(#","userGuid":"#.utf8) + JSONWriter.bytes(.string(token.record.userGuid))
            answer += Array(#","expiresAt":\#(token.record.expiresAt)"#.utf8)
            answer += Self.refreshFields(token)
            var response = Response.json(200, answer + [UInt8(ascii: "}")])
            // Token answers are never stored by caches (RFC 6749 5.1).
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }

    /// `,"expiresIn":…,"refreshToken":…,"refreshExpiresAt":…` for a session that refreshes;
    /// nothing otherwise.
    static func refreshFields(_ token: IssuedToken) -> [UInt8] {
        guard let refresh = token.refreshSecret, let refreshExpiresAt = token.record.refreshExpiresAt else {
            return []
        }
        let expiresIn = (token.record.expiresAt - token.record.renewedAt) / 1000
        var bytes = Array(#","expiresIn":\#(expiresIn),"refreshToken":"#.utf8)
        bytes += JSONWriter.bytes(.string(refresh))
        bytes += Array(#","refreshExpiresAt":\#(refreshExpiresAt)"#.utf8)
        return bytes
    }
}
