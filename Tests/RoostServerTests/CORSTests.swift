import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// CORS for browser apps on other origins: `cors.allowedOrigins` and `--cors-origins`.
@Suite struct CORSTests {
    static let app = "https://app.example.com"
    static let allowedHeaders =
        "Authorization, X-Token, Content-Type, If-Match, If-None-Match, Idempotency-Key, Range, X-Request-Id, X-Requested-With, Data-type, X-Ff-Auth-Session-Id, X-Ff-Auth-User-Guid"
    static let exposed = "ETag, Location, Retry-After, Content-Range, X-Request-Id, Idempotent-Replayed"

    private func server(origins: [String] = [], definition: String? = nil) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.corsOrigins = origins
            if let definition {
                configuration.appDefinition = try! AppDefinition.parse(Array(definition.utf8))
            }
        }
    }

    private func corsHeaders(_ response: TestResponse) -> [String] {
        response.headers.filter { $0.name.lowercased().hasPrefix("access-control-") || $0.name == "Vary" }
            .map(\.name)
    }

    @Test(arguments: ["/ff/resources/Post/abc", "/ff/login", "/anything/at/all"])
    func aPreflightFromAListedOriginIsAnsweredOnAnyPath(path: String) async throws {
        let server = try await server(origins: [Self.app])
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "OPTIONS", path,
            headers: [
                ("Origin", Self.app), ("Access-Control-Request-Method", "PATCH"),
                ("Access-Control-Request-Headers", "x-token, if-match, content-type"),
            ])
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == Self.app)
        #expect(response.header("Vary") == "Origin")
        #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, POST, PUT, PATCH, DELETE")
        #expect(response.header("Access-Control-Allow-Headers") == Self.allowedHeaders)
        #expect(response.header("Access-Control-Max-Age") == "600")
        #expect(response.header("Access-Control-Allow-Credentials") == nil)
        #expect(response.header("X-Request-Id") != nil)
    }

    @Test func aPreflightFromAnUnlistedOriginGetsNoCORSHeaders() async throws {
        let server = try await server(origins: [Self.app])
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "OPTIONS", "/ff/resources/Post",
            headers: [("Origin", "https://evil.example.net"), ("Access-Control-Request-Method", "POST")])
        #expect(response.status == 405)
        #expect(corsHeaders(response) == [])
    }

    @Test func answersToAListedOriginCarryTheHeadersErrorsIncluded() async throws {
        let server = try await server(origins: [Self.app])
        defer { Task { await server.stop() } }
        for (path, status) in [("/health", 200), ("/ff/resources/Post/nothing", 404), ("/ff/tokens", 401)] {
            let response = try await server.client.send("GET", path, headers: [("Origin", Self.app)])
            #expect(response.status == status)
            #expect(response.header("Access-Control-Allow-Origin") == Self.app, "\(path)")
            #expect(response.header("Vary") == "Origin", "\(path)")
            #expect(response.header("Access-Control-Expose-Headers") == Self.exposed, "\(path)")
        }
    }

    @Test func unlistedOriginsAndPlainRequestsGetNothing() async throws {
        let server = try await server(origins: [Self.app])
        defer { Task { await server.stop() } }
        let unlisted = try await server.client.send(
            "GET", "/health", headers: [("Origin", "https://app.example.co")])
        #expect(unlisted.status == 200)
        #expect(corsHeaders(unlisted) == [])
        #expect(corsHeaders(try await server.client.send("GET", "/health")) == [])
    }

    @Test func withoutAnyOriginListedNothingIsAllowed() async throws {
        let server = try await server()
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "OPTIONS", "/health", headers: [("Origin", Self.app), ("Access-Control-Request-Method", "GET")])
        #expect(response.status == 405)
        #expect(corsHeaders(response) == [])
    }

    @Test func theAppDefinitionListsOriginsAndAReloadChangesThem() async throws {
        let server = try await server(definition: #"{"cors":{"allowedOrigins":["HTTPS://App.Example.com"]}}"#)
        defer { Task { await server.stop() } }
        let allowed = try await server.client.send("GET", "/health", headers: [("Origin", Self.app)])
        #expect(allowed.header("Access-Control-Allow-Origin") == Self.app)
        server.application.definitions.replace(
            with: try AppDefinition.parse(
                Array(#"{"cors":{"allowedOrigins":["http://localhost:3000"]}}"#.utf8)))
        let dropped = try await server.client.send("GET", "/health", headers: [("Origin", Self.app)])
        #expect(corsHeaders(dropped) == [])
        let added = try await server.client.send(
            "GET", "/health", headers: [("Origin", "http://localhost:3000")])
        #expect(added.header("Access-Control-Allow-Origin") == "http://localhost:3000")
    }

    @Test func aStarAllowsEveryOriginWithoutVary() async throws {
        let server = try await server(origins: ["*"])
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "GET", "/health", headers: [("Origin", "https://any.example")])
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Vary") == nil)
        #expect(response.header("Access-Control-Allow-Credentials") == nil)
    }

    @Test(arguments: [
        (#"{"cors":{"allowedOrigins":["https://app.example.com/"]}}"#, "cors.allowedOrigins[0]"),
        (#"{"cors":{"allowedOrigins":["https://a.example", "ftp://b.example"]}}"#, "cors.allowedOrigins[1]"),
        (#"{"cors":{"allowedOrigins":["null"]}}"#, "cors.allowedOrigins[0]"),
        (#"{"cors":{"allowedOrigins":["http://x.example:99999"]}}"#, "cors.allowedOrigins[0]"),
        (#"{"cors":{"allowedOrigins":"https://a.example"}}"#, "cors.allowedOrigins"),
        (#"{"cors":{"origins":[]}}"#, "cors.origins"),
    ])
    func aBadOriginInTheDefinitionNamesItsField(definition: String, field: String) {
        #expect(throws: AppDefinitionError.self) { try AppDefinition.parse(Array(definition.utf8)) }
        do {
            _ = try AppDefinition.parse(Array(definition.utf8))
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func aDefinitionListsAtMost256Origins() throws {
        func definition(_ count: Int) -> [UInt8] {
            let origins = (0..<count).map { #""https://app\#($0).example""# }.joined(separator: ",")
            return Array(#"{"cors":{"allowedOrigins":[\#(origins)]}}"#.utf8)
        }
        #expect(try AppDefinition.parse(definition(256)).cors.allowedOrigins.count == 256)
        #expect(throws: AppDefinitionError.self) { try AppDefinition.parse(definition(257)) }
    }

    @Test func theFlagRefusesABadOrigin() async throws {
        let result = try await runRoost([
            "serve", "--port", "0", "--cors-origins", "https://a.example,app.example.com",
        ])
        #expect(result.status == 64)
        #expect(
            result.errorOutput.contains(
                "--cors-origins: 'app.example.com' is not an origin; write scheme://host[:port] with http or https and no path"
            ))
    }

    // MARK: - A real browser

    /// A page on one loopback origin calls Roost on another with fetch in headless Chromium; a
    /// page on an origin not listed cannot read Roost's answers.
    @Test func headlessChromiumCallsRoostFromAnotherOrigin() async throws {
        let pagePort = try freeLoopbackPort()
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.corsOrigins = ["http://127.0.0.1:\(pagePort)"]
        }
        defer { Task { await server.stop() } }
        let registered = try await server.client.register("browser")
        let token = try #require(registered.json["token"] as? String)
        let note = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"first"}"#, headers: [("X-Token", token)])
        let guid = try #require(note.json["guid"] as? String)

        guard
            let outcome = try await BrowserScript.run(
                "cors_fetch.py",
                [
                    // `=`: a token may begin with '-', which argparse would read as an option.
                    "--roost", "http://127.0.0.1:\(server.port)", "--token=\(token)", "--guid", guid,
                    "--page-port", String(pagePort),
                ])
        else { return }
        let listed = try #require(outcome["listed"] as? [String: Any], "\(outcome)")
        let get = try #require(listed["get"] as? [String: Any], "\(listed)")
        #expect(get["status"] as? Int == 200)
        #expect(get["etag"] as? String == "\"1\"")
        #expect((get["requestId"] as? String)?.isEmpty == false)
        #expect((get["body"] as? [String: Any])?["text"] as? String == "first")
        let post = try #require(listed["post"] as? [String: Any])
        #expect(post["status"] as? Int == 201)
        #expect((post["location"] as? String)?.hasPrefix("/ff/resources/Note/") == true)
        #expect((post["body"] as? [String: Any])?["text"] as? String == "from the browser")
        let patch = try #require(listed["patch"] as? [String: Any])
        #expect(patch["status"] as? Int == 200)
        #expect(patch["etag"] as? String == "\"2\"")
        // An error answer is readable too: the page sees the 412 and its code.
        let stale = try #require(listed["stale"] as? [String: Any])
        #expect(stale["status"] as? Int == 412)
        #expect((stale["body"] as? [String: Any])?["code"] as? String == "version_mismatch")
        let unlisted = try #require(outcome["unlisted"] as? [String: Any])
        #expect(unlisted["error"] as? String == "TypeError: Failed to fetch", "\(unlisted)")
        // Only the listed page's POST reached the store.
        let list = try await server.client.send("GET", "/ff/resources/Note")
        #expect((list.json["items"] as? [Any])?.count == 2)
    }
}
