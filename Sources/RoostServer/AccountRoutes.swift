import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// `/ff/register`, `/ff/login`, `/ff/logout`, `/ff/session`, `/ff/tokens`, `/ff/password`.
struct AccountRoutes: Sendable {
    let accounts: AccountService
    let authenticator: Authenticator
    /// After a registration: the verification mail, when verification is on.
    var registered: @Sendable (String) async -> Void = { _ in }

    func register(in routes: APIRoutes) {
        // Credentials and a profile are small: a large body is refused at its head, before anyone
        // is known, instead of being read and parsed for an anonymous caller.
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError.accountBodyTooLarge
        }
        routes.open.on(.post, "/ff/register", admit: small) { request, _ in try await register(request) }
        routes.open.on(.post, "/ff/login", admit: small) { request, _ in try await login(request) }
        routes.open.on(.post, "/ff/tokens", admit: small) { request, _ in try await createToken(request) }
        routes.open.on(.post, "/ff/logout", admit: small) { request, _ in try await logout(request) }
        routes.open.on(.get, "/ff/session") { request, _ in try await session(request) }
        routes.loggedIn.on(.get, "/ff/tokens") { try await listTokens(try $1.user()) }
        routes.loggedIn.on(.get, "/ff/tokens/:id") { request, context in
            let principal = try context.user()
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(
                        Self.describe(
                            try await accounts.token(
                                id: try request.parameters.require("id"), for: principal),
                            current: principal))))
        }
        routes.loggedIn.on(.delete, "/ff/tokens/:id") { request, context in
            let principal = try context.user()
            try await accounts.revokeToken(id: try request.parameters.require("id"), for: principal)
            return Response(status: 204)
        }
        routes.loggedIn.on(.post, "/ff/password") { try await changePassword($0, try $1.user()) }
    }

    private func register(_ request: Request) async throws -> Response {
        let body = try ObjectRoutes.bodyObject(request)
        let (user, token) = try await accounts.register(
            body, device: try Self.device(in: body), address: request.remoteAddress,
            client: clientKey(forAddress: request.remoteAddress), refresh: body["refresh"] == .bool(true))
        await registered(user.guid)
        // `required` e-mail verification: the account exists, its session waits for the address.
        guard let token else {
            return Response.json(
                201,
                Array(#"{"user":"#.utf8) + user.document + Array(#","emailVerificationRequired":true}"#.utf8))
        }
        return Response.json(201, Self.loginBody(user: user, token: token))
    }

    /// JSON `{userName|email, password}`, FatFractal's `{"credential": {...}}`, or HTTP Basic.
    private func login(_ request: Request) async throws -> Response {
        // Programs that handle the 401 themselves say so with X-Requested-With (as browsers' XHR
        // does): a challenge would make their HTTP stack ask for credentials instead.
        let usesBasic =
            request.headers["Authorization"]?.lowercased().hasPrefix("basic ") == true
            && request.headers["X-Requested-With"] == nil
        do {
            let (identifier, password, device) = try Self.credentials(in: request)
            let (user, token) = try await accounts.login(
                identifier: identifier, password: password, device: device, address: request.remoteAddress,
                client: clientKey(forAddress: request.remoteAddress), refresh: Self.asksRefresh(request))
            return Response.json(200, Self.loginBody(user: user, token: token))
        } catch let error as RoostError where error.code == .invalidCredentials && usesBasic {
            throw RoostError.invalidBasicCredentials
        }
    }

    /// Seed 003's token resource: the token object itself, with its id for later checks.
    private func createToken(_ request: Request) async throws -> Response {
        let (identifier, password, device) = try Self.credentials(in: request)
        let (_, token) = try await accounts.login(
            identifier: identifier, password: password, device: device, address: request.remoteAddress,
            client: clientKey(forAddress: request.remoteAddress), refresh: Self.asksRefresh(request))
        var object = Self.describe(token.record, current: nil)
        object["token"] = .string(token.secret)
        if let refresh = token.refreshSecret { object["refreshToken"] = .string(refresh) }
        var response = Response.json(201, JSONWriter.bytes(.object(object)))
        response.headers.set("Location", "/ff/tokens/\(token.record.id)")
        return response
    }

    private func logout(_ request: Request) async throws -> Response {
        guard let principal = await authenticator.optionalPrincipal(for: request) else {
            // A session that refreshes ends by its refresh token too: its access token may have
            // expired.
            if let refresh = Self.refreshToken(in: request),
                try await accounts.logout(refreshSecret: refresh)
            {
                return Response.json(200, Array(#"{"loggedOut":true}"#.utf8))
            }
            return Response.json(200, Array(#"{"loggedOut":false}"#.utf8))
        }
        try await accounts.logout(principal)
        return Response.json(200, Array(#"{"loggedOut":true}"#.utf8))
    }

    private func session(_ request: Request) async throws -> Response {
        guard let principal = await authenticator.optionalPrincipal(for: request),
            let user = try? await accounts.user(principal)
        else { return Response.json(200, Array(#"{"loggedIn":false}"#.utf8)) }
        return Response.json(
            200, Array(#"{"loggedIn":true,"user":"#.utf8) + user.document + [UInt8(ascii: "}")])
    }

    private func listTokens(_ principal: Principal) async throws -> Response {
        let items = try await accounts.tokens(for: principal).map {
            JSONValue.object(Self.describe($0, current: principal))
        }
        return Response.json(
            200, JSONWriter.bytes(.object(JSONObject(uniqueMembers: [("items", .array(items))]))))
    }

    private func changePassword(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = try ObjectRoutes.bodyObject(request)
        guard let current = body["currentPassword"]?.stringValue else {
            throw RoostError.missingField("currentPassword")
        }
        guard let new = body["newPassword"]?.stringValue else { throw RoostError.missingField("newPassword") }
        try await accounts.changePassword(
            for: principal, current: current, new: new, address: request.remoteAddress,
            client: clientKey(forAddress: request.remoteAddress))
        return Response.json(200, Array(#"{"changed":true}"#.utf8))
    }

    static func loginBody(user: StoredObject, token: IssuedToken) -> [UInt8] {
        var body = Array(#"{"user":"#.utf8) + user.document
        body += Array(#","token":"#.utf8) + JSONWriter.bytes(.string(token.secret))
        body += Array(#","tokenId":"#.utf8) + JSONWriter.bytes(.string(token.record.id))
        body += Array(#","expiresAt":\#(token.record.expiresAt)"#.utf8)
        body += RefreshRoutes.refreshFields(token)
        return body + [UInt8(ascii: "}")]
    }

    /// A token without its secret.
    static func describe(_ token: TokenRecord, current: Principal?) -> JSONObject {
        var object = JSONObject(uniqueMembers: [
            ("id", .string(token.id)), ("userGuid", .string(token.userGuid)),
            ("deviceId", .string(token.deviceId)),
            ("deviceType", token.deviceType.map(JSONValue.string) ?? .null),
            ("createdAt", .integer(token.createdAt)),
            ("expiresAt", .integer(token.expiresAt)),
            ("clientAddress", token.clientAddress.map(JSONValue.string) ?? .null),
        ])
        if let refreshExpiresAt = token.refreshExpiresAt {
            object["refreshExpiresAt"] = .integer(refreshExpiresAt)
        }
        if let current { object["current"] = .bool(current.tokenId == token.id) }
        return object
    }

    /// Whether a login's body asks for a session that refreshes (`"refresh": true`).
    static func asksRefresh(_ request: Request) -> Bool {
        guard !request.body.isEmpty, let body = try? ObjectRoutes.bodyObject(request) else { return false }
        return body["refresh"] == .bool(true) || body["credential"]?.objectValue?["refresh"] == .bool(true)
    }

    /// The `refreshToken` of a JSON body, if it has one.
    static func refreshToken(in request: Request) -> String? {
        guard !request.body.isEmpty, let body = try? ObjectRoutes.bodyObject(request) else { return nil }
        return body["refreshToken"]?.stringValue
    }

    static func device(in body: JSONObject) throws -> DeviceInfo {
        // Names of a device, kept with its session and shown in lists: no control characters
        // (U+0000 cannot even be stored on PostgreSQL).
        func name(_ field: String, maximum: Int) throws -> String? {
            guard let value = body[field]?.stringValue else { return nil }
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw RoostError.invalidField(field, "\(field) must not contain control characters.")
            }
            return String(value.prefix(maximum))
        }
        let manufacturerId = try name("manufacturerId", maximum: 128)
        return DeviceInfo(
            id: try name("deviceId", maximum: 128) ?? manufacturerId,
            type: try name("deviceType", maximum: 64),
            manufacturerId: manufacturerId)
    }

    /// The identifier, password and device of a login, from any of the accepted shapes.
    static func credentials(in request: Request) throws -> (String, String, DeviceInfo) {
        if let authorization = request.headers["Authorization"],
            authorization.lowercased().hasPrefix("basic ")
        {
            guard let (userName, password) = Authenticator.basicCredentials(in: request) else {
                throw RoostError.invalidCredentials
            }
            let device =
                request.body.isEmpty
                ? DeviceInfo() : try device(in: (try? ObjectRoutes.bodyObject(request)) ?? JSONObject())
            return (userName, password, device)
        }
        var body = try ObjectRoutes.bodyObject(request)
        if let credential = body["credential"]?.objectValue {
            for member in credential.members where body[member.key] == nil { body[member.key] = member.value }
        }
        guard let identifier = (body["userName"] ?? body["email"])?.stringValue else {
            throw RoostError.missingField("userName")
        }
        guard let password = body["password"]?.stringValue else { throw RoostError.missingField("password") }
        return (identifier, password, try device(in: body))
    }
}

extension RoostError {
    /// Only bodies over `Application.bodiesCheckedAtTheirHeadOver` are checked at their head.
    static let accountBodyTooLarge = RoostError(
        status: 413, code: .bodyTooLarge,
        message:
            "An account request takes at most \(Application.bodiesCheckedAtTheirHeadOver >> 10) KiB of body.")
}
