import RoostCore
import RoostHTTP
import RoostJSON

/// FatFractal's wire format in front of Roost's API, so FatFractal's own clients (FatFractal.js,
/// the iOS SDK) work unchanged.
///
/// A request speaks the dialect when the app definition says `"compatibility": "fatfractal"`, or
/// when it carries `Data-type` or `X-Ff-Auth-Session-Id`, headers only FatFractal's SDKs send.
/// Any other request reaches Roost's API untouched, and so does every request's answer. In the
/// dialect, sessions come from FatFractal's cookie and headers (``FatFractalSession``), bodies
/// are made lenient (``FatFractalWire/lenientBody(_:updating:)``) and every JSON answer is put
/// in the `{statusMessage, result}` envelope; blob bytes and other non-JSON answers pass as they are.
///
/// It also does what FatFractal's hosting did for every request, dialect or not: an app prefix
/// (`/<app>/ff/…` is `/ff/…`) and the web app's files (``StaticHosting``) on the same origin.
struct FatFractalDialect: HTTPMiddleware {
    let authenticator: Authenticator
    let definitions: AppDefinitionSource
    /// `--public-dir`, which wins over the definition's `hosting.publicDir`.
    var configuredHosting: StaticHosting? = nil
    /// `--app-prefix`, which wins over the definition's `hosting.appPrefix`.
    var configuredPrefix: String? = nil

    /// `hoodyoodoo` for `/hoodyoodoo/ff/…`; nil for none.
    var appPrefix: String? { configuredPrefix ?? definitions.definition.hosting.appPrefix }

    /// The web app's folder, if any; the definition's is resolved beside the definition file.
    var hosting: StaticHosting? {
        if let configuredHosting { return configuredHosting }
        guard let directory = definitions.definition.hosting.publicDirectory else { return nil }
        if directory.hasPrefix("/") { return StaticHosting(directory: directory) }
        let base = definitions.path.map { path in
            path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        }
        return StaticHosting(directory: (base ?? ".") + "/" + directory)
    }

    /// A request head without the app prefix, so the HTTP layer streams a prefixed blob upload
    /// as it streams an unprefixed one.
    static func removingAppPrefix(_ head: RequestHead, _ appPrefix: String?) -> RequestHead {
        guard let appPrefix else { return head }
        let lead = "/" + appPrefix
        guard head.target.hasPrefix(lead + "/") else { return head }
        var head = head
        head.target = String(head.target.dropFirst(lead.count))
        return head
    }

    /// `/<app>/rest` → `/rest`, keeping the query.
    func removingAppPrefix(_ request: Request) -> Request {
        guard let appPrefix else { return request }
        let lead = "/" + appPrefix
        guard request.path == lead || request.path.hasPrefix(lead + "/") else { return request }
        var request = request
        let rest = request.path.dropFirst(lead.count)
        request.path = rest.isEmpty ? "/" : rest
        request.target = String(request.path) + (request.query.map { "?" + $0 } ?? "")
        return request
    }

    func speaksDialect(_ request: Request) -> Bool {
        definitions.definition.compatibility == .fatfractal || request.headers["Data-type"] != nil
            || request.headers["X-Ff-Auth-Session-Id"] != nil || Self.isExtensionPath(request.path)
            // Empty segments, which the router ignores, only when there are any: no copy of the
            // path on the way of every other request.
            || (request.path.contains("//")
                && Self.isExtensionPath(FatFractalSession.routedPath(request.path)[...]))
    }

    func respond(to original: Request, next: MiddlewareChain.Next) async -> Response {
        var request = removingAppPrefix(original)
        let prefix = original.path == request.path ? "" : "/" + (appPrefix ?? "")
        if let hosting, let answer = hosting.respond(to: request, prefix: prefix, asked: original.path) {
            return answer
        }
        guard speaksDialect(request), request.method != .options else {
            return await next.respond(to: request)
        }
        let session = FatFractalSession(request)
        let method = request.method
        // The dialect parses the body (to translate it) before the routes do: it reserves for the
        // parse, and the routes, given no budget, reserve nothing again.
        let reserved: Int?
        do {
            try session.apply(to: &request)
            reserved = try ParsedBodyReservation.reserve(for: request)
            try Self.translateBody(of: &request)
        } catch {
            return await refusal(error, request, next)
        }
        let budget = request.heldBytes
        defer { reserved.map { budget?.release($0) } }
        if reserved != nil { request.heldBytes = nil }
        let path = request.path
        if request.method == .post, path == "/ff/login" { return await login(request, next) }
        if request.method == .get, Self.isGrabBagQuery(path) {
            return await refusal(Self.grabBagQueryUnsupported, request, next)
        }
        let grabBag = Self.grabBagAddress(path)
        if request.method == .post, let grabBag {
            return await changeGrabBag(request, parent: grabBag.parent, bag: grabBag.bag, next: next)
        }
        let response = await next.respond(to: request)
        if request.method == .get, let grabBag, Self.isMissingBlob(response, member: grabBag.bag) {
            return await readGrabBag(request, parent: grabBag.parent, bag: grabBag.bag, next: next)
        }
        if request.method == .post, path == "/ff/register", response.status == 201 {
            return FatFractalSession.loginAnswer(response, request: request, wire: Self.ownUser) ?? response
        }
        if request.method == .post, path == "/ff/logout", response.status < 400 {
            var answer = Response.json(200, FatFractalWire.envelope("Logged out", .null))
            Self.expireCookies(&answer, request)
            return answer
        }
        return await envelope(response, request, session: session, method: method, next: next)
    }

    func admit(_ original: Request, next: MiddlewareChain.Next) async -> Response? {
        var request = removingAppPrefix(original)
        guard speaksDialect(request) else { return await next.admit(request) }
        let session = FatFractalSession(request)
        do {
            try session.apply(to: &request)
        } catch {
            return await refusal(error, request, next)
        }
        guard let refusal = await next.admit(request) else { return nil }
        return await envelope(refusal, request, session: session, next: next)
    }

    /// An error raised here, answered as the API would, in the envelope.
    private func refusal(_ error: any Error, _ request: Request, _ next: MiddlewareChain.Next) async
        -> Response
    {
        let roostError =
            (error as? RoostError)
            ?? RoostError(status: 400, code: .invalidJson, message: "The body is not a JSON object.")
        return await envelope(ErrorBoundary.render(roostError), request, session: nil, next: next)
    }

    /// `POST /ff/login`, with FatFractal's `AllowAutoRegistration`: an unknown user name with a
    /// password registers (a known one with a wrong password still gets the login's 401).
    private func login(_ request: Request, _ next: MiddlewareChain.Next) async -> Response {
        var response = await next.respond(to: request)
        if response.status == 401, definitions.definition.settings.allowAutoRegistration,
            case .object(let body)? = try? JSONParser.parse(request.body)
        {
            var registration = request
            registration.target = "/ff/register"
            registration.path = "/ff/register"
            registration.body = JSONWriter.bytes(.object(body["credential"]?.objectValue ?? body))
            let registered = await next.respond(to: registration)
            if registered.status == 201 { response = registered }
        }
        if (200..<300).contains(response.status),
            let answer = FatFractalSession.loginAnswer(response, request: request, wire: Self.ownUser)
        {
            return answer
        }
        return await envelope(response, request, session: nil, next: next)
    }

    /// Creates and updates made lenient; `PUT …/ffACL` in FatFractal's shapes.
    static func translateBody(of request: inout Request) throws {
        let parts = request.path.split(separator: "/")
        guard parts.count >= 3, parts[0] == "ff", parts[1] == "resources" else {
            if request.method == .post, request.path == "/ff/register", !request.body.isEmpty {
                request.body = JSONWriter.bytes(
                    .object(FatFractalWire.lenientBody(try ObjectRoutes.bodyObject(request), updating: nil)))
            }
            return
        }
        switch (request.method, parts.count) {
        case (.post, 3):
            request.body = JSONWriter.bytes(
                .object(FatFractalWire.lenientBody(try ObjectRoutes.bodyObject(request), updating: nil)))
        case (.put, 4) where !parts[3].hasPrefix("("):
            request.body = JSONWriter.bytes(
                .object(
                    FatFractalWire.lenientBody(
                        try ObjectRoutes.bodyObject(request), updating: String(parts[3]))))
        case (.put, 5) where parts[4] == "ffACL":
            try FatFractalACL.translate(&request)
        default:
            break
        }
    }

    /// Puts a JSON answer in the envelope; a 204 becomes a 200 with JSON (the SDK parses every
    /// 2xx body); a 401 on a session also expires the cookies, as the SDK forgets it.
    func envelope(
        _ response: Response, _ request: Request, session: FatFractalSession?, method: HTTPMethod? = nil,
        next: MiddlewareChain.Next
    ) async -> Response {
        let method = method ?? request.method
        guard response.file == nil, response.stream == nil, !Self.isExtensionAnswer(response) else {
            return response
        }
        var answer = response
        if response.status == 204 {
            answer = Response(status: 200, headers: response.headers)
            answer.body = FatFractalWire.envelope(Self.successMessage(method), .null)
            answer.headers.set("Content-Type", "application/json; charset=utf-8")
            answer.route = response.route
            return answer
        }
        guard response.headers["Content-Type"]?.hasPrefix("application/json") == true,
            case .object(let body)? = try? JSONParser.parse(response.body)
        else { return response }
        if response.status >= 400 {
            answer.body = FatFractalWire.errorEnvelope(body)
            if response.status == 401, session?.secret != nil { Self.expireCookies(&answer, request) }
        } else {
            let access = Access(caller: await principal(of: request), definition: definitions.definition)
            // One object's access list is read to judge ffUserCanEdit; a list's objects are
            // judged by their collection's rules alone (one read per item would be too many).
            var acl: [UInt8]?
            if method != .post, let ffUrl = body["ffUrl"]?.stringValue, body["guid"] != nil {
                acl = await accessList(of: ffUrl, request, next)
            }
            let result = FatFractalWire.result(of: .object(body)) { collection, document, createdBy in
                access.mayUpdate(collection: collection, document: document, createdBy: createdBy, acl: acl)
            }
            answer.body = FatFractalWire.envelope(Self.successMessage(method), result)
            // The tag was of Roost's body; the envelope is another representation.
            answer.headers.remove("ETag")
        }
        return answer
    }

    /// The object's access list as the caller may read it; nil when it has none.
    func accessList(of ffUrl: String, _ request: Request, _ next: MiddlewareChain.Next) async -> [UInt8]? {
        let answer = await next.respond(to: Self.internalRequest(request, .get, ffUrl + "/ffACL"))
        guard answer.status == 200, answer.body != Array("{}".utf8) else { return nil }
        return answer.body
    }

    /// Who the request is from, for `ffUserCanEdit`; nil when anonymous or not valid.
    func principal(of request: Request) async -> Principal? {
        try? await authenticator.principal(for: request)
    }

    /// The logged-in user as the login answer shows it: users may edit their own profile.
    private static func ownUser(_ user: JSONValue) -> JSONValue {
        FatFractalWire.result(of: user) { _, _, _ in true }
    }

    private static func expireCookies(_ response: inout Response, _ request: Request) {
        for cookie in FatFractalSession.expiringCookies(secure: request.scheme == "https") {
            response.headers.add("Set-Cookie", cookie)
        }
    }

    private static func successMessage(_ method: HTTPMethod) -> String {
        switch method {
        case .post: "Created"
        case .put, .patch: "Updated"
        case .delete: "Deleted"
        default: "Retrieved"
        }
    }
}
