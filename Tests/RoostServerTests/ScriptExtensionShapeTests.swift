import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import RoostTestSupport
import Testing

@testable import RoostServer

@Suite("What an extension sees and how its answer is shaped")
struct ScriptExtensionShapeTests {
    static let alice = Principal(userGuid: "g-alice", tokenId: "t")

    func request(
        _ method: HTTPMethod = .post, _ target: String = "/ff/ext/Stats?user=gary&message=Hello%2C+World",
        headers: [(String, String)], body: String = ""
    ) -> Request {
        Request(method: method, target: target, headers: HTTPHeaders(headers), body: Array(body.utf8))
    }

    @Test(
        "the request data: method, path, parameters, headers without credentials, a JSON body parsed, cookies without the session"
    )
    func requestData() throws {
        let request = request(
            headers: [
                ("Host", "example.test"), ("Content-Type", "application/json"),
                ("Data-type", "application/json"),
                ("Authorization", "Bearer secret-token"), ("X-Token", "secret-token"),
                ("X-Ff-Auth-Session-Id", "secret-session"), ("X-Ff-Auth-User-Guid", "g-alice"),
                ("Cookie", "sessionId=secret-session; userGuid=forged; theme=dark"), ("Accept", "a"),
                ("Accept", "b"),
            ], body: #" {"password":"pw","n":[1,2]}"#)
        let data = ScriptExtensionRequest.data(of: request, caller: Self.alice)
        #expect(data["httpMethod"] == .string("POST"))
        #expect(data["httpRequestUri"] == .string("/ff/ext/Stats"))
        #expect(data["httpParameters"] == (try json(#"{"user":"gary","message":"Hello, World"}"#)))
        #expect(data["httpContent"] == (try json(#"{"password":"pw","n":[1,2]}"#)))
        #expect(data["httpCookies"] == (try json(#"{"theme":"dark","userGuid":"g-alice"}"#)))
        let headers = try #require(data["httpHeaders"]?.objectValue)
        #expect(headers["Host"] == .string("example.test"))
        #expect(headers["Accept"] == .string("a, b"))
        #expect(headers["X-Ff-Auth-User-Guid"] == .string("g-alice"))
        let text = JSONWriter.string(.object(data))
        for secret in ["secret-token", "secret-session", "Authorization", "X-Token", "\"Cookie\""] {
            #expect(!text.contains(secret), "\(secret)")
        }
    }

    @Test(
        "a form body's fields join the parameters (the query string's win); other bodies are text; an anonymous caller's userGuid cookie is dropped"
    )
    func formsAndText() {
        let form = ScriptExtensionRequest.data(
            of: request(
                .post, "/ff/ext/Reset?guid=from-query",
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", "userGuid=forged"),
                ],
                body: "guid=from-form&password=a+b%21"),
            caller: nil)
        #expect(
            form["httpParameters"]
                == .object(
                    JSONObject(uniqueMembers: [
                        ("guid", .string("from-query")), ("password", .string("a b!")),
                    ])))
        #expect(form["httpContent"] == .string("guid=from-form&password=a+b%21"))
        #expect(form["httpCookies"] == .object(JSONObject()))
        let text = ScriptExtensionRequest.data(
            of: request(
                .put, "/ff/ext/Echo", headers: [("Content-Type", "text/plain")], body: "plain {words"),
            caller: nil)
        #expect(text["httpContent"] == .string("plain {words"))
        #expect(text["httpParameters"] == .object(JSONObject()))
        let empty = ScriptExtensionRequest.data(of: request(.get, "/ff/ext/Echo", headers: []), caller: nil)
        #expect(empty["httpContent"] == .string(""))
    }

    @Test("the app address is the request's scheme and host, with the app prefix")
    func appAddress() {
        var request = request(.get, "/ff/ext/X", headers: [("Host", "example.test:8443")])
        request.scheme = "https"
        #expect(
            ScriptExtensionRequest.appAddress(of: request, prefix: "hoodyoodoo")
                == "https://example.test:8443/hoodyoodoo")
        #expect(ScriptExtensionRequest.appAddress(of: request, prefix: nil) == "https://example.test:8443")
    }

    func answer(_ response: String?, value: JSONValue = .null) throws -> Response {
        try ScriptExtensionAnswer.response(
            ScriptOutcome(value: value, response: try response.map { try #require(try json($0).objectValue) })
        )
    }

    @Test(
        "ff.response() with JSON: the envelope, a stringified JSON result embedded parsed, responseCode as the status"
    )
    func jsonAnswers() throws {
        let stats = try answer(
            #"{"result":"{\"clazz\":\"StatsObject\",\"totalUsers\":3}","responseCode":"200","statusMessage":"Stats","mimeType":"application/json"}"#
        )
        #expect(stats.status == 200)
        #expect(stats.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(
            String(decoding: stats.body, as: UTF8.self)
                == #"{"statusMessage":"Stats","result":{"clazz":"StatsObject","totalUsers":3}}"#)
        let created = try answer(#"{"result":[1,2],"responseCode":201}"#)
        #expect(created.status == 201)
        #expect(String(decoding: created.body, as: UTF8.self) == #"{"statusMessage":"OK","result":[1,2]}"#)
        let words = try answer(#"{"result":"just words","responseCode":"202","statusMessage":"Queued"}"#)
        #expect(
            String(decoding: words.body, as: UTF8.self)
                == #"{"statusMessage":"Queued","result":"just words"}"#)
    }

    @Test("no ff.response(): the function's return value in the envelope with 200")
    func returnValue() throws {
        let response = try answer(nil, value: try json(#"{"total":4}"#))
        #expect(response.status == 200)
        #expect(
            String(decoding: response.body, as: UTF8.self) == #"{"statusMessage":"OK","result":{"total":4}}"#)
        let nothing = try answer(nil)
        #expect(String(decoding: nothing.body, as: UTF8.self) == #"{"statusMessage":"OK","result":null}"#)
    }

    @Test("text/html and other types: the result raw with that type and status")
    func rawAnswers() throws {
        let html = try answer(#"{"result":"<h2>Not found</h2>","responseCode":"404","mimeType":"text/html"}"#)
        #expect(html.status == 404)
        #expect(html.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(String(decoding: html.body, as: UTF8.self) == "<h2>Not found</h2>")
        let csv = try answer(#"{"result":"a,b","mimeType":"text/csv; charset=utf-8"}"#)
        #expect(csv.status == 200)
        #expect(csv.headers["Content-Type"] == "text/csv; charset=utf-8")
        let object = try answer(#"{"result":{"a":1},"mimeType":"application/x-custom"}"#)
        #expect(String(decoding: object.body, as: UTF8.self) == #"{"a":1}"#)
    }

    @Test("a JSON answer of 400 or more is the script's refusal with its statusMessage")
    func refusal() throws {
        #expect(throws: RoostError.scriptRefused(status: 400, message: "Empty password")) {
            try answer(#"{"responseCode":"400","statusMessage":"Empty password"}"#)
        }
        #expect(throws: RoostError.scriptRefused(status: 403, message: "The extension refused the request."))
        {
            try answer(#"{"responseCode":403}"#)
        }
    }

    @Test("a status or media type that cannot be an HTTP answer is a problem the route logs")
    func badFields() {
        for bad in [
            #"{"responseCode":"abc"}"#, #"{"responseCode":"99"}"#, #"{"responseCode":700}"#,
            #"{"responseCode":true}"#, #"{"mimeType":"text/html\r\nSet-Cookie: x=1"}"#,
            #"{"mimeType":"html"}"#,
            #"{"mimeType":12}"#,
        ] {
            #expect(throws: ScriptExtensionAnswer.Problem.self, "\(bad)") { try answer(bad) }
        }
    }

    @Test("extension answers pass the dialect's envelope untouched; its errors do not")
    func dialectPassThrough() {
        var answer = Response.json(200, Array("{}".utf8))
        answer.route = ScriptExtensionRoutes.pattern
        #expect(FatFractalDialect.isExtensionAnswer(answer))
        answer.status = 401
        #expect(!FatFractalDialect.isExtensionAnswer(answer))
        answer.status = 200
        answer.route = "/ff/resources/:collection"
        #expect(!FatFractalDialect.isExtensionAnswer(answer))
        #expect(FatFractalDialect.isExtensionPath("/ff/ext/Stats"))
        #expect(!FatFractalDialect.isExtensionPath("/ff/resources/Stats"))
    }
}

@Suite("/ff/ext/ speaks FatFractal's dialect whatever the client")
struct ScriptExtensionDialectTests {
    @Test(
        "a plain client (no Data-type) on an app without compatibility gets the envelope with statusMessage")
    func envelopeWithoutDialectHeaders() async throws {
        let server = try await TestServer()
        defer { Task { await server.stop() } }
        let answer = try await server.client.send("GET", "/ff/ext/Nope")
        #expect(answer.status == 404)
        #expect(answer.json["statusMessage"] is String)
        #expect(answer.json["code"] as? String == "not_found")
        #expect(answer.json.keys.contains("result"))
        // Elsewhere the native API is unchanged.
        let native = try await server.client.send("GET", "/ff/nothing-here")
        #expect(native.json["message"] is String)
        #expect(native.json["statusMessage"] == nil)
    }
}
