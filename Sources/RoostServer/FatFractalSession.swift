import Foundation
import RoostCore
import RoostHTTP
import RoostJSON

/// FatFractal's sessions mapped onto Roost tokens: a session id is a Roost token secret.
///
/// It arrives as the `X-Ff-Auth-Session-Id` header (clients that simulate cookies) or the
/// `sessionId` cookie (browsers, and the iOS SDK's `Cookie:` header), beside the user's guid in
/// `X-Ff-Auth-User-Guid` or the `userGuid` cookie. Roost's own `Authorization`/`X-Token` win
/// when present. The secret goes on as `X-Token`, so every rule, policy and expiry of tokens
/// applies unchanged; it is never logged (the access log has no headers or cookies).
struct FatFractalSession {
    /// The token secret, if the request carries one in FatFractal's places.
    let secret: String?
    /// The user guid the client says the session is for.
    let userGuid: String?
    /// Whether the secret came from a cookie, which a browser attaches by itself.
    let fromCookie: Bool

    static let sessionCookie = "sessionId"
    static let userCookie = "userGuid"

    init(_ request: Request) {
        let cookies = Self.cookies(request.headers.values(for: "Cookie"))
        if let header = request.headers["X-Ff-Auth-Session-Id"], !header.isEmpty {
            secret = header
            userGuid = request.headers["X-Ff-Auth-User-Guid"] ?? cookies[Self.userCookie]
            fromCookie = false
        } else {
            secret = cookies[Self.sessionCookie].flatMap { $0.isEmpty ? nil : $0 }
            userGuid = cookies[Self.userCookie]
            fromCookie = secret != nil
        }
    }

    /// `name=value` pairs of `Cookie:` headers; the first of a repeated name counts.
    static func cookies(_ headers: [String]) -> [String: String] {
        var found: [String: String] = [:]
        for header in headers {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                if found[name] == nil { found[name] = value }
            }
        }
        return found
    }

    /// Puts the session where Roost looks for a token. A write authenticated only by a cookie
    /// must carry `Data-type` (CSRF: a custom header forces a CORS preflight, which Roost never
    /// answers with `Access-Control-Allow-Credentials`, so no other site can send one with the
    /// user's cookie).
    /// `path` with its empty segments dropped, as the router matches it.
    static func routedPath(_ path: some StringProtocol) -> String {
        "/" + path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }

    func apply(to request: inout Request) throws {
        guard let secret, request.headers["Authorization"] == nil, request.headers["X-Token"] == nil else {
            return
        }
        // The path as the router reads it (empty segments ignored): `/ff//admin/…` is `/ff/admin/…`.
        let path = Self.routedPath(request.path)
        // Administration takes no cookie at all: its token must be in a header, which no other
        // site can make a browser send (CSRF).
        if fromCookie, path == "/ff/admin" || path.hasPrefix("/ff/admin/") {
            throw RoostError(
                status: 403, code: .tokenHeaderRequired,
                message:
                    "Administration routes take the token in the Authorization or X-Token header, never from the sessionId cookie."
            )
        }
        // An extension may write even when called with GET, and `SameSite=Lax` cookies ride
        // top-level navigations from any site: a link elsewhere would run it as the user.
        if fromCookie, FatFractalDialect.isExtensionPath(path[...]), !Self.isSameOrigin(request) {
            throw RoostError(
                status: 403, code: .sameOriginRequired,
                message:
                    "An extension call authenticated by the sessionId cookie must come from this app's own pages: send the Data-type header as FatFractal's clients do (a browser's Sec-Fetch-Site: same-origin or a matching Origin also serves)."
            )
        }
        if fromCookie, ![.get, .head, .options].contains(request.method), request.headers["Data-type"] == nil
        {
            throw RoostError(
                status: 403, code: .dialectHeaderRequired,
                message:
                    "A write authenticated by the sessionId cookie must carry the Data-type header that FatFractal's clients send."
            )
        }
        request.headers.set("X-Token", secret)
    }

    /// Whether a cookie-authenticated request shows it comes from the app's own pages: the
    /// dialect's header (which no other site can send without a preflight), the browser's
    /// `Sec-Fetch-Site: same-origin` (not `none`: a link opened from a mail or chat app says
    /// that, and carries the cookie), or an `Origin` that is this server's.
    static func isSameOrigin(_ request: Request) -> Bool {
        if request.headers["Data-type"] != nil { return true }
        if let site = request.headers["Sec-Fetch-Site"] {
            return site.caseInsensitiveCompare("same-origin") == .orderedSame
        }
        guard let origin = request.headers["Origin"], let host = request.headers["Host"] else { return false }
        return origin.caseInsensitiveCompare("\(request.scheme)://\(host)") == .orderedSame
    }

    /// `Set-Cookie` values that hand the session to a browser: readable by JavaScript (the SDK
    /// reads `document.cookie`), `SameSite=Lax` (not sent on cross-site subrequests or form
    /// posts), `Secure` over HTTPS, and ending with the browser session (the token's own
    /// lifetime still applies on the server).
    static func setCookies(secret: String, userGuid: String, secure: Bool) -> [String] {
        let attributes = "; Path=/; SameSite=Lax" + (secure ? "; Secure" : "")
        return [
            "\(sessionCookie)=\(secret)\(attributes)",
            "\(userCookie)=\(userGuid)\(attributes)",
        ]
    }

    /// `Set-Cookie` values that make a browser forget the session.
    static func expiringCookies(secure: Bool) -> [String] {
        let attributes = "; Path=/; Max-Age=0; SameSite=Lax" + (secure ? "; Secure" : "")
        return ["\(sessionCookie)=\(attributes)", "\(userCookie)=\(attributes)"]
    }

    /// Roost's login answer `{user, token, …}` as FatFractal's: `result.loggedInUser`,
    /// `result.authResult.session.sessionId` and `result.credential.userGuid`, plus the cookies.
    static func loginAnswer(_ response: Response, request: Request, wire: (JSONValue) -> JSONValue)
        -> Response?
    {
        guard case .object(let body)? = try? JSONParser.parse(response.body),
            case .object(var user)? = body["user"], let secret = body["token"]?.stringValue,
            let guid = user["guid"]?.stringValue
        else { return nil }
        if user["clazz"] == nil { user["clazz"] = .string(AccountService.userCollection) }
        let session = JSONObject(uniqueMembers: [
            ("sessionId", .string(secret)), ("userGuid", .string(guid)),
            ("expiresAt", body["expiresAt"] ?? .null),
        ])
        let result = JSONObject(uniqueMembers: [
            ("loggedInUser", wire(.object(user))),
            ("authResult", .object(JSONObject(uniqueMembers: [("session", .object(session))]))),
            ("credential", .object(JSONObject(uniqueMembers: [("userGuid", .string(guid))]))),
        ])
        var answer = response
        answer.body = FatFractalWire.envelope(
            response.status == 201 ? "Registered and logged in" : "Logged in", .object(result))
        for cookie in setCookies(secret: secret, userGuid: guid, secure: request.scheme == "https") {
            answer.headers.add("Set-Cookie", cookie)
        }
        answer.headers.set("Cache-Control", "no-store")
        return answer
    }
}
