import RoostCore
import RoostHTTP

/// Which browser origins may call the API, and the headers that tell a browser so.
///
/// Origins come from `--cors-origins` and the app definition's `cors.allowedOrigins` (reloaded with
/// it). A request from a listed origin gets `Access-Control-Allow-Origin` with its origin and
/// `Vary: Origin`; a preflight `OPTIONS` from one is answered here for any path. An origin not
/// listed gets no CORS header at all, so the browser keeps the answer from the page. Tokens travel
/// in headers, never cookies, so `Access-Control-Allow-Credentials` is never sent and `*` is safe.
struct CORSPolicy: Sendable {
    /// From `--cors-origins`, normalised.
    let configuredOrigins: [String]
    let definitions: AppDefinitionSource

    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
    // FatFractal's clients send Data-type and, with simulated cookies, X-Ff-Auth-*: a web app on
    // a listed origin may use them (credentials are never allowed, so cookies stay same-origin).
    static let allowedHeaders =
        "Authorization, X-Token, Content-Type, If-Match, If-None-Match, Idempotency-Key, Range, X-Request-Id, X-Requested-With, Data-type, X-Ff-Auth-Session-Id, X-Ff-Auth-User-Guid"
    static let exposedHeaders =
        "ETag, Location, Retry-After, Content-Range, X-Request-Id, Idempotent-Replayed"
    /// Seconds a browser may keep a preflight's answer (Chromium keeps it two hours at most).
    static let maxAge = "600"

    /// The `Access-Control-Allow-Origin` value for a request's `Origin`: the origin itself when
    /// it is listed, `*` when any origin is, nil when it may not call.
    func allowOriginValue(for request: Request) -> String? {
        guard let origin = request.headers["Origin"] else { return nil }
        let definitionOrigins = definitions.definition.cors.allowedOrigins
        guard !configuredOrigins.isEmpty || !definitionOrigins.isEmpty else { return nil }
        let lowered = origin.lowercased()
        if configuredOrigins.contains(lowered) || definitionOrigins.contains(lowered) { return origin }
        if configuredOrigins.contains("*") || definitionOrigins.contains("*") { return "*" }
        return nil
    }

    /// Whether the request is a CORS preflight: `OPTIONS` naming the method it asks for.
    static func isPreflight(_ request: Request) -> Bool {
        request.method == .options && request.headers["Access-Control-Request-Method"] != nil
    }

    /// The answer to a preflight from an allowed origin.
    static func preflight(allowOrigin: String) -> Response {
        var response = Response(status: 204)
        response.headers.add("Access-Control-Allow-Origin", allowOrigin)
        if allowOrigin != "*" { response.headers.add("Vary", "Origin") }
        response.headers.add("Access-Control-Allow-Methods", allowedMethods)
        response.headers.add("Access-Control-Allow-Headers", allowedHeaders)
        response.headers.add("Access-Control-Max-Age", maxAge)
        response.route = "cors-preflight"
        return response
    }

    /// Adds the headers an answer to an allowed origin carries.
    static func decorate(_ response: inout Response, allowOrigin: String) {
        response.headers.set("Access-Control-Allow-Origin", allowOrigin)
        if allowOrigin != "*" { response.headers.add("Vary", "Origin") }
        response.headers.set("Access-Control-Expose-Headers", exposedHeaders)
    }
}

/// Answers CORS preflights for any path from an allowed origin, and puts the CORS headers on
/// every answer to one, errors and refused uploads included.
struct CORSMiddleware: HTTPMiddleware {
    let policy: CORSPolicy

    func respond(to request: Request, next: MiddlewareChain.Next) async -> Response {
        guard let allowOrigin = policy.allowOriginValue(for: request) else {
            return await next.respond(to: request)
        }
        if CORSPolicy.isPreflight(request) { return CORSPolicy.preflight(allowOrigin: allowOrigin) }
        var response = await next.respond(to: request)
        CORSPolicy.decorate(&response, allowOrigin: allowOrigin)
        return response
    }

    func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response? {
        guard var refusal = await next.admit(request) else { return nil }
        if let allowOrigin = policy.allowOriginValue(for: request) {
            CORSPolicy.decorate(&refusal, allowOrigin: allowOrigin)
        }
        return refusal
    }
}
