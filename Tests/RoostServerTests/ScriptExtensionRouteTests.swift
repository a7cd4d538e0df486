import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Extensions end to end over HTTP; they need the script runtime wired into the server.
@Suite("Extensions at /ff/ext/<name>")
struct ScriptExtensionRouteTests {
    /// Our own scripts in FatFractal's style (not FatFractal's files).
    static let module = #"""
        var ff = require('ffef/FatFractal');

        // In the style of hoodyoodoo's AggregateStats: the answer is r.result = JSON.stringify(…).
        function countNotes(json) {
            var data = JSON.parse(json);
            var stats = {clazz: 'NoteStats'};
            stats.totalUsers = ff.getAllGuids('/FFUser').length;
            stats.totalNotes = ff.getAllGuids('/Note').length;
            stats.yourNotes = ff.getArrayFromUrl("/Note/(createdBy eq '" + data.httpCookies['userGuid'] + "')").length;
            var r = ff.response();
            r.result = JSON.stringify(stats);
            r.responseCode = '200';
            r.statusMessage = 'Counted on the server';
            r.mimeType = 'application/json';
            return r;
        }

        function greet() {
            var r = ff.response();
            r.mimeType = 'text/html';
            r.responseCode = '200';
            r.result = '<h1>Hello ' + ff.getActiveUser().guid + '</h1>';
        }

        function refuse() {
            throw {statusCode: 403, statusMessage: 'Members of the club only'};
        }

        function whoAmI() {
            return ff.getActiveUser();
        }

        function echo() {
            var data = ff.getExtensionRequestData();
            return {method: data.httpMethod, parameters: data.httpParameters, content: data.httpContent,
                    sawAuthorization: data.httpHeaders['Authorization'] !== undefined};
        }

        exports.countNotes = countNotes;
        exports.greet = greet;
        exports.refuse = refuse;
        exports.whoAmI = whoAmI;
        exports.echo = echo;
        """#

    static func makeServer(appPrefix: String? = nil) async throws -> TestServer {
        var definition = try AppDefinition.parse(
            Array(#"{"collections": {"Note": {"rules": {"create": "loggedIn"}}}}"#.utf8))
        definition.scripts.modules = ["scripts/Club": module]
        func entry(_ function: String) -> ScriptEntry {
            ScriptEntry(module: "scripts/Club", function: function)
        }
        definition.scripts.extensions = [
            "Stats": ScriptExtension(
                name: "Stats", secured: true,
                entry: ScriptEntry(
                    code: "var f = require('scripts/Club'); f.countNotes(FF_EXTENSION_REQUEST_DATA_JSON);")),
            "Greet": ScriptExtension(name: "Greet", secured: false, entry: entry("greet")),
            "Refuse": ScriptExtension(name: "Refuse", secured: false, entry: entry("refuse")),
            "WhoAmI": ScriptExtension(name: "WhoAmI", secured: true, entry: entry("whoAmI")),
            "Echo": ScriptExtension(name: "Echo", secured: false, entry: entry("echo")),
        ]
        return try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.appPrefix = appPrefix
        }
    }

    @Test func extensionAnswersAreNeverSniffedAndHTMLHasAPolicy() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let page = try await server.client.send("GET", "/ff/ext/Greet")
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        #expect(
            page.header("Content-Security-Policy")
                == "default-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'"
        )
        // Any other type a browser might render (SVG, XML) gets the same policy.
        let json = try await server.client.send("GET", "/ff/ext/Echo")
        #expect(json.status == 200)
        #expect(json.header("X-Content-Type-Options") == "nosniff")
        #expect(json.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
    }

    /// A link on another site is a top-level GET that carries `SameSite=Lax` cookies: it must not
    /// run an extension as the user. Proof of the app's own page is the dialect's header, the
    /// browser's `Sec-Fetch-Site`, or a matching `Origin`.
    @Test func aCookieAloneDoesNotRunAnExtensionFromAnotherSite() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let login = try await server.client.fatFractalRegister("alice")
        let refused: [[(String, String)]] = [
            [],
            [("Sec-Fetch-Site", "cross-site")],
            [("Sec-Fetch-Site", "same-site")],
            // A link opened from a mail or chat app.
            [("Sec-Fetch-Site", "none")],
            [("Origin", "https://evil.example")],
            [("Origin", "null")],
        ]
        // The router ignores empty segments; the check must too (found by review).
        for (method, path) in [
            ("GET", "/ff/ext/WhoAmI"), ("POST", "/ff/ext/WhoAmI"), ("GET", "/ff//ext/WhoAmI"),
            ("GET", "//ff/ext//WhoAmI"),
        ] {
            for headers in refused {
                let answer = try await server.client.send(
                    method, path, headers: [login.cookieHeader] + headers)
                #expect(answer.status == 403, "\(method) \(path) \(headers)")
                #expect(answer.json["code"] as? String == "same_origin_required", "\(answer.text)")
            }
        }
        let allowed: [[(String, String)]] = [
            [("Sec-Fetch-Site", "same-origin")],
            [("Origin", "http://127.0.0.1")],
            [("Data-type", "application/json")],
        ]
        for headers in allowed {
            let answer = try await server.client.send(
                "GET", "/ff/ext/WhoAmI", headers: [login.cookieHeader] + headers)
            #expect(answer.status == 200, "\(headers): \(answer.text)")
        }
        // A token in a header is no ambient credential: no proof needed.
        let bearer = try await server.client.send("GET", "/ff/ext/WhoAmI", headers: login.authHeaders)
        #expect(bearer.status == 200)
    }

    @Test("a secured extension refuses anonymous callers with the dialect's 401, and answers a logged-in one")
    func securedStats() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let anonymous = try await server.client.ff("GET", "/ff/ext/Stats")
        #expect(anonymous.status == 401)
        #expect(anonymous.json["statusMessage"] as? String != nil)
        #expect(anonymous.json["code"] as? String == "login_required")

        let login = try await server.client.fatFractalRegister("alice")
        for n in 1...2 {
            let note = try await server.client.ff(
                "POST", "/ff/resources/Note", #"{"n":\#(n)}"#, login.authHeaders)
            #expect(note.status == 201)
        }
        // The browser's way: the session cookie, from the app's own page (a GET needs no Data-type).
        let stats = try await server.client.send(
            "GET", "/ff/ext/Stats", headers: [login.cookieHeader, ("Sec-Fetch-Site", "same-origin")])
        #expect(stats.status == 200)
        #expect(stats.json["statusMessage"] as? String == "Counted on the server")
        let result = try #require(stats.json["result"] as? [String: Any])
        #expect(result["clazz"] as? String == "NoteStats")
        #expect(result["totalUsers"] as? Int == 1)
        #expect(result["totalNotes"] as? Int == 2)
        #expect(result["yourNotes"] as? Int == 2)
    }

    @Test("an unsecured extension answers anonymous callers; text/html comes raw")
    func html() async throws {
        let server = try await Self.makeServer(appPrefix: "club")
        defer { Task { await server.stop() } }
        for path in ["/ff/ext/Greet", "/club/ff/ext/Greet"] {
            let page = try await server.client.send("GET", path)
            #expect(page.status == 200, "\(path)")
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text == "<h1>Hello anonymous</h1>")
        }
    }

    @Test("a thrown {statusCode, statusMessage} is that status with FatFractal's error body")
    func thrownRefusal() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let refused = try await server.client.send("POST", "/ff/ext/Refuse", headers: fatFractalHeaders)
        #expect(refused.status == 403)
        #expect(refused.json["statusMessage"] as? String == "Members of the club only")
        #expect(refused.json["code"] as? String == "script_refused")
    }

    @Test("an unknown extension is 404 in the envelope")
    func unknown() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let missing = try await server.client.send("GET", "/ff/ext/Nope")
        #expect(missing.status == 404)
        #expect(missing.json["statusMessage"] as? String == "This app has no extension 'Nope'.")
        #expect(missing.json["code"] as? String == "not_found")
    }

    @Test("getActiveUser is the caller's FFUser")
    func activeUser() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let login = try await server.client.fatFractalRegister("alice")
        let me = try await server.client.ff("GET", "/ff/ext/WhoAmI", nil, login.authHeaders)
        #expect(me.status == 200)
        let result = try #require(me.json["result"] as? [String: Any])
        #expect(result["guid"] as? String == login.userGuid)
        #expect(result["clazz"] as? String == "FFUser")
        #expect(result["userName"] as? String == "alice")
    }

    @Test("the request data reaches the script: method, parameters, a JSON body parsed, no credentials")
    func requestData() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let login = try await server.client.fatFractalRegister("alice")
        let echo = try await server.client.ff(
            "POST", "/ff/ext/Echo?guid=g1", #"{"password":"pw"}"#,
            [("Authorization", "Bearer " + login.sessionId)])
        #expect(echo.status == 200)
        let result = try #require(echo.json["result"] as? [String: Any])
        #expect(result["method"] as? String == "POST")
        #expect((result["parameters"] as? [String: Any])?["guid"] as? String == "g1")
        #expect((result["content"] as? [String: Any])?["password"] as? String == "pw")
        #expect(result["sawAuthorization"] as? Bool == false)
    }
}
