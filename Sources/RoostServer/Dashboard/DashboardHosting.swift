import RoostCore
import RoostHTTP
import RoostJSON

/// `/_/`: the admin dashboard, served from the binary (its files are Swift strings, see
/// ``DashboardAssets``). The path is reserved: `--public-dir` never serves under it, and no
/// route is declared there, so the API description leaves it out.
///
/// `/_/assets/…` are the files, 404 when unknown; any other path under `/_/` is the page, which
/// routes on the client (`/_/collections/Note` reloads as the page). Every answer forbids
/// framing and inline script, and sends no referrer; files are revalidated by their ETag.
struct DashboardHosting: HTTPMiddleware {
    /// The page and its files, built once.
    let assets = DashboardAssets.standard
    /// `--admin-allow`: nil serves any address.
    var allowed: TrustedProxies? = nil

    /// Whether `path` is the dashboard's (reserved from the API and from `--public-dir`).
    static func isDashboardPath(_ path: Substring) -> Bool {
        path == "/_" || path.hasPrefix("/_/")
    }

    /// The headers of every dashboard answer: what keeps the page from being framed, fed inline
    /// script or other origins' code, or sniffed as another type.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                + "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
                + "form-action 'self'; frame-ancestors 'none'"
        ),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    func respond(to request: Request, next: MiddlewareChain.Next) async -> Response {
        guard Self.isDashboardPath(request.path) else { return await next.respond(to: request) }
        return decorated(answer(request))
    }

    func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response? {
        guard Self.isDashboardPath(request.path) else { return await next.admit(request) }
        // Nothing under `/_/` takes a body: a large one is refused (405) before it is read.
        return request.method == .get || request.method == .head ? nil : decorated(answer(request))
    }

    private func decorated(_ response: Response) -> Response {
        var response = response
        for (name, value) in Self.securityHeaders { response.headers.set(name, value) }
        response.route = "dashboard"
        return response
    }

    private func answer(_ request: Request) -> Response {
        if let allowed, !allowed.contains(request.remoteAddress) {
            return ErrorBoundary.render(.addressNotAllowed)
        }
        guard request.method == .get || request.method == .head else {
            var response = ErrorBoundary.render(Self.methodNotAllowed(request.method))
            response.headers.set("Allow", "GET, HEAD")
            return response
        }
        if request.path == "/_" {
            var redirect = Response(status: 301)
            redirect.headers.set("Location", "/_/" + (request.query.map { "?" + $0 } ?? ""))
            return redirect
        }
        guard let asset = assets.asset(at: request.path) else {
            return ErrorBoundary.render(
                RoostError(status: 404, code: .notFound, message: "The dashboard has no file at this path."))
        }
        var headers = HTTPHeaders()
        headers.set("ETag", asset.tag)
        headers.set("Cache-Control", "no-cache")
        if let tags = request.headers["If-None-Match"],
            tags.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == asset.tag
                    || $0.trimmingCharacters(in: .whitespaces) == "*"
            })
        {
            return Response(status: 304, headers: headers)
        }
        headers.set("Content-Type", asset.contentType)
        return Response(status: 200, headers: headers, body: asset.bytes)
    }

    static func methodNotAllowed(_ method: HTTPMethod) -> RoostError {
        RoostError(
            status: 405, code: .methodNotAllowed,
            message: "The dashboard's pages are read with GET; this request used \(method).",
            details: JSONObject(uniqueMembers: [("allowed", .array([.string("GET"), .string("HEAD")]))]))
    }
}
