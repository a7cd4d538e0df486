import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// `POST /ff/login/{provider}` (Sign in with Apple and Google by ID token), the caller's
/// identities at `/ff/me/identities`, and anyone's for administrators at `/ff/admin/identities`.
struct SignInRoutes: Sendable {
    let service: SignInService

    func register(in routes: APIRoutes) {
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError.accountBodyTooLarge
        }
        routes.open.on(.post, "/ff/login/:provider", admit: small) { request, _ in try await signIn(request) }
        routes.loggedIn.on(.get, "/ff/me/identities") { _, context in
            let principal = try context.user()
            return try await list(principal.userGuid, by: principal, withOwner: false)
        }
        routes.loggedIn.on(.post, "/ff/me/identities/:provider", admit: small) { request, context in
            let provider = try service.configuredProvider(try request.parameters.require("provider"))
            let (idToken, nonce, _) = try Self.tokenAndNonce(request)
            let identity = try await service.link(
                provider: provider, idToken: idToken, nonce: nonce, to: try context.user())
            return Response.json(201, JSONWriter.bytes(.object(Self.describe(identity, withOwner: false))))
        }
        routes.loggedIn.on(.delete, "/ff/me/identities/:provider") { request, context in
            let principal = try context.user()
            try await service.unlink(
                provider: try request.parameters.require("provider"), ofUser: principal.userGuid,
                by: principal)
            return Response(status: 204)
        }
        routes.administrators.on(.get, "/ff/admin/identities") { request, context in
            try await list(try Self.user(request), by: try context.user(), withOwner: true)
        }
        routes.administrators.on(.delete, "/ff/admin/identities/:provider") { request, context in
            try await service.unlink(
                provider: try request.parameters.require("provider"), ofUser: try Self.user(request),
                by: try context.user())
            return Response(status: 204)
        }
    }

    private func signIn(_ request: Request) async throws -> Response {
        let provider = try service.configuredProvider(try request.parameters.require("provider"))
        let (idToken, nonce, body) = try Self.tokenAndNonce(request)
        let (user, token, created) = try await service.signIn(
            provider: provider, idToken: idToken, nonce: nonce,
            device: try AccountRoutes.device(in: body), address: request.remoteAddress,
            client: clientKey(forAddress: request.remoteAddress), refresh: body["refresh"] == .bool(true))
        var response = Response.json(created ? 201 : 200, AccountRoutes.loginBody(user: user, token: token))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// The `idToken` and `nonce` of a JSON body, and the body.
    static func tokenAndNonce(_ request: Request) throws -> (String, String, JSONObject) {
        let body = try ObjectRoutes.bodyObject(request)
        func text(_ field: String) throws -> String {
            guard let value = body[field] else { throw RoostError.missingField(field) }
            guard let string = value.stringValue else {
                throw RoostError.invalidField(field, "\(field) must be a string.")
            }
            return string
        }
        return (try text("idToken"), try text("nonce"), body)
    }

    static func describe(_ identity: IdentityRecord, withOwner: Bool) -> JSONObject {
        var object = JSONObject(uniqueMembers: [
            ("provider", .string(identity.provider)), ("subject", .string(identity.subject)),
            ("email", identity.email.map(JSONValue.string) ?? .null),
            ("createdAt", .integer(identity.createdAt)),
        ])
        if withOwner { object["userGuid"] = .string(identity.userGuid) }
        return object
    }

    private func list(_ userGuid: String, by principal: Principal, withOwner: Bool) async throws -> Response {
        let items = try await service.identities(ofUser: userGuid, by: principal).map {
            JSONValue.object(Self.describe($0, withOwner: withOwner))
        }
        return Response.json(
            200, JSONWriter.bytes(.object(JSONObject(uniqueMembers: [("items", .array(items))]))))
    }

    private static func user(_ request: Request) throws -> String {
        guard let user = request.queryParameter("user"), !user.isEmpty else {
            throw RoostError.invalidParameter(
                "user", "Name the user whose identities these are: ?user={guid}.")
        }
        return user
    }
}
