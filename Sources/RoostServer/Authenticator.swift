import Foundation
import RoostCore
import RoostHTTP
import RoostStore

/// Finds who a request comes from: a token in `Authorization: Bearer` or `X-Token`, or FatFractal's
/// system user's password as `Authorization: Basic` for `system`.
/// An administrator's token from outside `--admin-allow` is an ordinary user's token: a stolen
/// one cannot promote users or read everything through `/ff/resources` from anywhere.
struct Authenticator: Sendable {
    let accounts: AccountService
    /// `--admin-allow`; nil: administrators are administrators from any address.
    var adminAllowed: TrustedProxies? = nil
    /// The system user's login; nil (in tests that build routes alone) refuses Basic as before.
    var system: SystemLogin? = nil

    /// The principal, nil for a request without credentials; a bad token throws `invalid_token`
    /// rather than quietly treating the request as anonymous.
    func principal(for request: Request) async throws -> Principal? {
        if let system, let (userName, password) = Self.basicCredentials(in: request),
            userName == SystemLogin.userName
        {
            // The system is nothing but an administrator: outside `--admin-allow` it is refused
            // before its password is even checked, so it cannot be guessed from there.
            if let adminAllowed, !adminAllowed.contains(request.remoteAddress) {
                throw RoostError.addressNotAllowed
            }
            // Tools send the system password (curl -u, DataImport), browsers never need to: a
            // browser's request is refused, so no other site can ride on credentials a browser
            // keeps (a cross-site form post to /ff/metadata, an <img> of an extension).
            if request.headers["Origin"] != nil || request.headers["Sec-Fetch-Site"] != nil {
                throw RoostError.systemFromBrowser
            }
            return try await system.principal(
                password: password, client: clientKey(forAddress: request.remoteAddress))
        }
        guard let secret = try Self.tokenSecret(in: request) else { return nil }
        let principal = try await accounts.authenticate(secret: secret)
        guard principal.isAdmin, let adminAllowed, !adminAllowed.contains(request.remoteAddress) else {
            return principal
        }
        return principal.withholdingAdmin()
    }

    /// The principal, or nil when the request has no valid token (for the session check and logout).
    func optionalPrincipal(for request: Request) async -> Principal? {
        try? await principal(for: request)
    }

    /// The user name and password of `Authorization: Basic`; nil without one, or for one that is
    /// not base64 of UTF-8 `name:password`.
    static func basicCredentials(in request: Request) -> (String, String)? {
        guard let authorization = request.headers["Authorization"],
            authorization.lowercased().hasPrefix("basic ")
        else { return nil }
        guard
            let decoded = Data(
                base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func tokenSecret(in request: Request) throws -> String? {
        if let authorization = request.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw RoostError(
                    status: 401, code: .invalidToken,
                    message:
                        "Send a token as 'Authorization: Bearer <token>'; HTTP Basic works only with POST /ff/login."
                )
            }
            return String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        return request.headers["X-Token"]
    }
}

/// The API's route groups: every route sees its caller (a bad token is refused at the head),
/// writes honour `Idempotency-Key`, and some routes are for logged-in users only.
struct APIRoutes {
    /// No middleware: routes that read credentials themselves (login, registration).
    let open: RouteGroup
    /// The caller authenticated, and a large body's parse reserved.
    let api: RouteGroup
    /// ``api`` with `Idempotency-Key`.
    let writes: RouteGroup
    /// ``api`` for logged-in users only.
    let loggedIn: RouteGroup
    /// Administrators only: the client's address (`--admin-allow`) first, then the caller's token,
    /// which must be an administrator's (401 without one, 403 for anyone else).
    let administrators: RouteGroup

    init(
        table: RouteTable, authenticator: Authenticator, idempotentWrites: IdempotentWrites,
        adminAllowed: TrustedProxies? = nil
    ) {
        open = RouteGroup(table: table, middleware: [])
        api = open.grouped(
            Authentication(authenticator: authenticator), ReservedCollections(), BodyReservation())
        writes = api.grouped(idempotentWrites)
        loggedIn = api.grouped(LoginRequired())
        // The address first: a client outside `--admin-allow` costs not even a token lookup.
        administrators = open.grouped(
            AdminAddresses(allowed: adminAllowed), Authentication(authenticator: authenticator),
            BodyReservation(), LoginRequired(), AdminRequired())
    }
}

/// What a handler may build from a large body (a JSON tree takes many times the text's bytes),
/// reserved against the server's held-bytes budget before the body is parsed: many large bodies
/// at once wait their turn (503 with `Retry-After`) instead of exhausting memory.
enum ParsedBodyReservation {
    /// Bodies up to this size parse unreserved: the common case touches no shared counter.
    static let unreservedBytes = 64 * 1024
    /// A parsed document's bytes per byte of its text: a tree of short keys and numbers takes
    /// 10 to 50 times its text (issue 24's measurements), one of long strings about twice.
    static let bytesPerBodyByte = 16

    /// The bytes reserved for the request's body, nil when none was needed (a small body, or no
    /// budget: whoever passed the request on reserved already). One reservation takes at most
    /// half the budget, so that it can be had.
    static func reserve(for request: Request) throws -> Int? {
        guard request.body.count > unreservedBytes, let budget = request.heldBytes else { return nil }
        let bytes = min(request.body.count * bytesPerBodyByte, budget.limit / 2)
        guard budget.reserve(bytes) else {
            throw RoostError.serverBusy(
                retryAfter: 1,
                message: "The server is parsing too many large request bodies at once; send it again shortly."
            )
        }
        return bytes
    }
}
