import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// A request with a large body (over 64 KiB, or chunked) is refused from its head when its head
/// is enough to refuse it: nobody has megabytes read and parsed on their behalf before they are
/// allowed. Each refusal below arrives while the client has sent the head alone.
@Suite("Large bodies are admitted at their head")
struct BodyAdmissionTests {
    static func makeServer() async throws -> TestServer {
        var definition = try AppDefinition.parse(
            Array(
                #"{"collections": {"Private": {"rules": {"create": "loggedIn"}}, "Closed": {"rules": {"create": "none"}}, "Mine": {"rules": {"create": "@request.body.owner eq @user.guid"}}}}"#
                    .utf8))
        definition.scripts.modules = ["scripts/Echo": "exports.echo = function () { return {ok: true}; };"]
        definition.scripts.extensions = [
            "Secured": ScriptExtension(
                name: "Secured", secured: true, entry: ScriptEntry(module: "scripts/Echo", function: "echo")),
            "Open": ScriptExtension(
                name: "Open", secured: false, entry: ScriptEntry(module: "scripts/Echo", function: "echo")),
        ]
        return try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
    }

    /// Sends only the head of a request whose body would be `length` bytes, and reads the answer.
    static func headOnly(
        _ server: TestServer, _ method: String, _ path: String, length: Int, headers: [(String, String)] = []
    ) async throws -> TestResponse {
        let connection = try RawConnection(port: server.port)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(length)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        connection.send(head + "\r\n")
        return try await connection.response()
    }

    @Test func refusalsThatTheHeadDecides() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let megabytes = 8 << 20
        let cases: [(String, String, [(String, String)], Int, String)] = [
            ("POST", "/ff/resources/Private", [], 401, "login_required"),
            ("POST", "/ff/resources/Closed", [], 401, "login_required"),
            ("POST", "/ff/resources/Private", [("X-Token", "not-a-token")], 401, "invalid_token"),
            ("PUT", "/ff/resources/Private/abc", [("X-Token", "not-a-token")], 401, "invalid_token"),
            ("POST", "/ff/resources/FFUser", [], 403, "forbidden"),
            ("POST", "/ff/ext/Nowhere", [], 404, "not_found"),
            ("POST", "/ff/ext/Secured", [], 401, "login_required"),
            ("POST", "/ff/ext/Open", [], 413, "body_too_large"),
            ("POST", "/ff/login", [], 413, "body_too_large"),
            ("POST", "/ff/register", [], 413, "body_too_large"),
            ("POST", "/ff/tokens", [], 413, "body_too_large"),
            ("POST", "/ff/logout", [], 413, "body_too_large"),
            ("POST", "/ff/nowhere", [], 404, "not_found"),
        ]
        for (method, path, headers, status, code) in cases {
            let answer = try await Self.headOnly(server, method, path, length: megabytes, headers: headers)
            #expect(answer.status == status, "\(method) \(path): \(answer.text)")
            #expect(answer.json["code"] as? String == code, "\(method) \(path): \(answer.text)")
        }
        // A logged-in user is refused by `none` the same way.
        _ = try await server.client.register("ann")
        let token = try await server.client.login("ann", password: "correct horse")
        let closed = try await Self.headOnly(
            server, "POST", "/ff/resources/Closed", length: megabytes, headers: [("X-Token", token)])
        #expect(closed.status == 403)
        #expect(closed.json["code"] as? String == "forbidden")
    }

    @Test func whatTheHeadAllowsIsReadAndStoredWhole() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        _ = try await server.client.register("ann")
        let token = try await server.client.login("ann", password: "correct horse")
        let text = String(repeating: "z", count: 200_000)
        // With Expect: 100-continue, the client is told to send once its head passed.
        let connection = try RawConnection(port: server.port)
        let body = Array(#"{"text":"\#(text)"}"#.utf8)
        connection.send(
            "POST /ff/resources/Private HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "X-Token: \(token)\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n")
        #expect(try await connection.response(head: true).status == 100)
        connection.send(body)
        let created = try await connection.response()
        #expect(created.status == 201)
        #expect((created.json["text"] as? String)?.count == text.count)
        // Without it, head and body arrive together; a rule that reads the body is decided on it.
        let mine = try await server.client.send(
            "POST", "/ff/resources/Mine", json: #"{"owner":"someone else","text":"\#(text)"}"#,
            headers: [("X-Token", token)])
        #expect(mine.status == 403)
        let anonymous = try await server.client.send(
            "POST", "/ff/resources/Mine", json: #"{"text":"\#(text)"}"#)
        #expect(anonymous.status == 401)
        let open = try await server.client.send("POST", "/ff/ext/Open", json: #"{"text":"\#(text)"}"#)
        #expect(open.status == 200, "\(open.text)")
    }

    /// The dialect parses a body to translate it before the routes do: it reserves first, and the
    /// routes do not reserve the same body again (twice would be over 6 MiB).
    @Test(arguments: [(2 << 20, 503), (6 << 20, 201)])
    func theDialectReservesOnceBeforeItParses(budget: Int, status: Int) async throws {
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.maxHeldRequestBytes = budget
        }
        defer { Task { await server.stop() } }
        let body =
            #"{"clazz":"Numbers","numbers":["# + Array(repeating: "1", count: 600_000).joined(separator: ",")
            + "]}"
        // 1.25 MB of the budget are held by a body still arriving.
        let occupied = try await Self.occupy(server, bytes: 1_250_000)
        let answer = try await server.client.send(
            "POST", "/ff/resources/Numbers", headers: [("Data-type", "json")], body: Array(body.utf8))
        #expect(answer.status == status, "\(answer.text.prefix(200))")
        occupied.hangUp()
        #expect(await eventually { server.application.heldRequestBytes == 0 })
    }

    /// A request whose body is still arriving: the bytes received so far are held, leaving less
    /// of the budget for others.
    static func occupy(_ server: TestServer, bytes: Int) async throws -> RawConnection {
        let connection = try RawConnection(port: server.port)
        connection.send(
            "POST /ff/resources/Slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(bytes * 2)\r\n\r\n")
        connection.send(Array(#"{"x":""#.utf8) + [UInt8](repeating: 120, count: bytes))
        let held = bytes - 64 * 1024
        guard await eventually(within: 30, { server.application.heldRequestBytes >= held }) else {
            throw TestClientError(description: "the server did not receive the partial body")
        }
        return connection
    }

    /// Parsing a large body reserves many times its size against the held-bytes budget first.
    @Test(arguments: [(2 << 20, 503), (8 << 20, 201)])
    func parsingALargeBodyReservesItsTreeFirst(budget: Int, status: Int) async throws {
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.maxHeldRequestBytes = budget
        }
        defer { Task { await server.stop() } }
        // 1.2 MB of text: its tree is reserved as 16 times that, at most half the budget: with a
        // 1.25 MB held by another request, over 2 MiB but within 8.
        let body = #"{"numbers":["# + Array(repeating: "1", count: 600_000).joined(separator: ",") + "]}"
        // 1.25 MB of the budget are held by a body still arriving.
        let occupied = try await Self.occupy(server, bytes: 1_250_000)
        let answer = try await server.client.send("POST", "/ff/resources/Numbers", json: body)
        #expect(answer.status == status, "\(answer.text.prefix(200))")
        if status == 503 {
            #expect(answer.json["code"] as? String == "server_busy")
            #expect(answer.header("Retry-After") == "1")
        }
        // What was reserved is given back.
        occupied.hangUp()
        #expect(await eventually { server.application.heldRequestBytes == 0 })
    }
}
