import RoostCore
import RoostHTTP
import RoostStore

/// Finds who a request comes from: a token in `Authorization: Bearer` or `X-Token`.
struct Authenticator: Sendable {
    let accounts: AccountService

    /// The principal, nil for a request without credentials; a bad token throws `invalid_token`
    /// rather than quietly treating the request as anonymous.
    func principal(for request: Request) async throws -> Principal? {
        guard let secret = try Self.tokenSecret(in: request) else { return nil }
        return try await accounts.authenticate(secret: secret)
    }

    /// The principal, or nil when the request has no valid token (for the session check and logout).
    func optionalPrincipal(for request: Request) async -> Principal? {
        try? await principal(for: request)
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

/// A router whose handlers receive the request's principal.
struct APIRouter {
    var router: Router
    let authenticator: Authenticator
    let idempotentWrites: IdempotentWrites

    /// Adds a route whose handler gets the principal (nil when anonymous); `admit` checks a
    /// streamed request's head, with its principal, before its body is read.
    mutating func on(
        _ method: HTTPMethod, _ pattern: String, streamingBody: Bool = false,
        admit: (@Sendable (Request, Principal?) async throws -> Void)? = nil,
        _ handler: @escaping @Sendable (Request, Principal?) async throws -> Response
    ) {
        // Every route checks the caller when a large body's head arrives (see
        // `RequestLimits.announcedBodiesOver`): a bad token is refused before the body is read.
        let admission: Admission = { [authenticator] request in
            let principal = try await authenticator.principal(for: request)
            try await admit?(request, principal)
        }
        router.on(method, pattern, streamingBody: streamingBody, admit: admission) {
            [authenticator] request in
            let principal = try await authenticator.principal(for: request)
            let reserved = try ParsedBodyReservation.reserve(for: request)
            defer { reserved.map { request.heldBytes?.release($0) } }
            return try await handler(request, principal)
        }
    }

    /// Adds a write route that honours `Idempotency-Key`; the handler gets the key to mark as
    /// run in its write's transaction.
    mutating func onWrite(
        _ method: HTTPMethod, _ pattern: String, streamingBody: Bool = false,
        admit: (@Sendable (Request, Principal?) async throws -> Void)? = nil,
        _ handler: @escaping @Sendable (Request, Principal?, IdempotencyMark?) async throws -> Response
    ) {
        on(method, pattern, streamingBody: streamingBody, admit: admit) {
            [idempotentWrites] request, principal in
            try await idempotentWrites.respond(to: request, principal: principal, handler)
        }
    }

    /// Adds a route that needs a logged-in user.
    mutating func onLoggedIn(
        _ method: HTTPMethod, _ pattern: String,
        _ handler: @escaping @Sendable (Request, Principal) async throws -> Response
    ) {
        on(method, pattern, admit: { if $1 == nil { throw RoostError.loginRequired } }) {
            request, principal in
            guard let principal else { throw RoostError.loginRequired }
            return try await handler(request, principal)
        }
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
