import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts

/// The request an extension sees (`ff.getExtensionRequestData()`, `FF_EXTENSION_REQUEST_DATA_JSON`).
enum ScriptExtensionRequest {
    /// Headers that carry credentials: a script never needs them (it runs with the caller's
    /// rights already), and a script's log line must not be able to leak them.
    static let secretHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "x-token", "x-ff-auth-session-id",
    ]

    /// `httpMethod`, `httpRequestUri` (the path), `httpParameters` (the query string's and a form
    /// body's, first value of a name wins, as a servlet's `getParameter`), `httpHeaders` (without
    /// credentials; repeated ones joined by ", "), `httpContent` (a JSON body parsed, as
    /// FatFractal's scripts index it: `data.httpContent['password']`; any other body as text;
    /// "" when empty) and `httpCookies` (without `sessionId`; `userGuid` is the authenticated
    /// caller's, never what an anonymous client claims).
    static func data(of request: Request, caller: Principal?) -> JSONObject {
        var data = JSONObject()
        data["httpMethod"] = .string(request.method.rawValue)
        data["httpRequestUri"] = .string(String(request.path))
        var parameters = JSONObject()
        let contentType = request.headers["Content-Type"]?.lowercased() ?? ""
        let form = contentType.hasPrefix("application/x-www-form-urlencoded")
        let text = String(decoding: request.body, as: UTF8.self)
        for source in [request.query.map(String.init), form ? text : nil].compactMap({ $0 }) {
            for (name, value) in formPairs(source) where parameters[name] == nil {
                parameters[name] = .string(value)
            }
        }
        data["httpParameters"] = .object(parameters)
        var headers = JSONObject()
        for (name, value) in request.headers where !secretHeaders.contains(name.lowercased()) {
            if let earlier = headers[name]?.stringValue {
                headers[name] = .string(earlier + ", " + value)
            } else {
                headers[name] = .string(value)
            }
        }
        data["httpHeaders"] = .object(headers)
        data["httpContent"] = content(request.body, text: text, form: form)
        var cookies = JSONObject()
        for (name, value) in FatFractalSession.cookies(request.headers.values(for: "Cookie"))
            .sorted(by: { $0.key < $1.key })
        where name != FatFractalSession.sessionCookie && name != FatFractalSession.userCookie {
            cookies[name] = .string(value)
        }
        if let caller { cookies[FatFractalSession.userCookie] = .string(caller.userGuid) }
        data["httpCookies"] = .object(cookies)
        return data
    }

    private static func content(_ body: [UInt8], text: String, form: Bool) -> JSONValue {
        guard !form, let first = body.first(where: { ![9, 10, 13, 32].contains($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
            let parsed = try? JSONParser.parse(body)
        else { return .string(text) }
        return parsed
    }

    /// `a=1&b=2` decoded; pairs that do not decode are skipped.
    static func formPairs(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(parts[0], plusAsSpace: true), !name.isEmpty,
                let value = parts.count > 1 ? PercentEncoding.decode(parts[1], plusAsSpace: true) : ""
            else { return nil }
            return (name, value)
        }
    }

    /// `scheme://Host[/prefix]` of the request.
    static func appAddress(of request: Request, prefix: String?) -> String {
        let host = request.headers["Host"] ?? "localhost"
        return "\(request.scheme)://\(host)" + (prefix.map { "/" + $0 } ?? "")
    }
}

/// An extension's answer as FatFractal gave it.
///
/// - `ff.response()` with `mimeType` absent or JSON: the envelope `{"statusMessage", "result"}`
///   with `responseCode` (a string or a number) as the status; a string result that parses as
///   JSON is embedded parsed (hoodyoodoo's `r.result = JSON.stringify(stats)`). A status of 400
///   or more is a refusal: the dialect's error body with the script's `statusMessage`.
/// - any other `mimeType` (`text/html`): the result's text raw, with that type and status.
/// - no `ff.response()`: the function's return value in the envelope, status 200.
enum ScriptExtensionAnswer {
    /// What a script set that cannot be an HTTP answer; logged, and the client gets 500.
    struct Problem: Error {
        let reason: String
    }

    static func response(_ outcome: ScriptOutcome) throws -> Response {
        guard let fields = outcome.response else {
            return Response.json(200, FatFractalWire.envelope("OK", embedded(outcome.value)))
        }
        let status = try statusCode(fields["responseCode"] ?? .null)
        let message = fields["statusMessage"].flatMap(text)
        let result = fields["result"] ?? .null
        if let mimeType = try mimeType(fields["mimeType"] ?? .null), !isJSON(mimeType) {
            var headers = HTTPHeaders()
            let charset =
                mimeType.lowercased().hasPrefix("text/") && !mimeType.lowercased().contains("charset")
            headers.set("Content-Type", mimeType + (charset ? "; charset=utf-8" : ""))
            let body: String =
                switch result {
                case .null: ""
                case .string(let text): text
                default: JSONWriter.string(result)
                }
            return Response(status: status, headers: headers, body: Array(body.utf8))
        }
        if status >= 400 {
            throw RoostError.scriptRefused(
                status: status, message: message ?? "The extension refused the request.")
        }
        return Response.json(status, FatFractalWire.envelope(message ?? "OK", embedded(result)))
    }

    /// A string holding a JSON object or array, parsed; anything else as it is.
    static func embedded(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value,
            let first = text.utf8.first(where: { ![9, 10, 13, 32].contains($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
            let parsed = try? JSONParser.parse(text)
        else { return value }
        return parsed
    }

    /// `"200"`, `200` or absent (200); an HTTP status from 200 to 599.
    static func statusCode(_ value: JSONValue) throws -> Int {
        let code: Int?
        switch value {
        case .null: return 200
        case .string(let text): code = Int(text.trimmingCharacters(in: .whitespaces))
        case .number(let literal):
            code = Int(literal) ?? Double(literal).flatMap { $0 == $0.rounded() ? Int($0) : nil }
        default: code = nil
        }
        guard let code, (200...599).contains(code) else {
            throw Problem(
                reason:
                    "responseCode \(JSONWriter.string(value).prefix(40)) is not an HTTP status from 200 to 599"
            )
        }
        return code
    }

    /// The media type, checked so a script cannot write other headers through it.
    static func mimeType(_ value: JSONValue) throws -> String? {
        switch value {
        case .null: return nil
        case .string(let text) where text.isEmpty: return nil
        case .string(let text)
        where text.utf8.count <= 200 && text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
            && text.contains("/"):
            return text
        default:
            throw Problem(
                reason:
                    "mimeType \(JSONWriter.string(value).prefix(60)) is not a media type such as text/html")
        }
    }

    static func isJSON(_ mimeType: String) -> Bool {
        let base = mimeType.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        return base == "application/json" || base?.hasSuffix("+json") == true
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .null: nil
        default: JSONWriter.string(value)
        }
    }
}
