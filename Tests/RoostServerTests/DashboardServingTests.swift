import Foundation
import RoostServer
import RoostTestSupport
import Testing

/// `/_/`: the dashboard's page and files from the binary, with headers that forbid framing,
/// inline script and sniffing, revalidated by ETag, reserved from `--public-dir` (issue 30).
@Suite("Dashboard serving")
struct DashboardServingTests {
    static let policy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        + "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
        + "form-action 'self'; frame-ancestors 'none'"

    static func expectSecurityHeaders(_ response: TestResponse, _ what: String) {
        #expect(response.header("Content-Security-Policy") == policy, "\(what)")
        #expect(response.header("X-Frame-Options") == "DENY", "\(what)")
        #expect(response.header("X-Content-Type-Options") == "nosniff", "\(what)")
        #expect(response.header("Referrer-Policy") == "no-referrer", "\(what)")
    }

    @Test("the page and its files, with their headers, ETags and 304s")
    func pageAndFiles() async throws {
        let server = try await TestServer()
        defer { Task { await server.stop() } }
        let page = try await server.client.send("GET", "/_/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Cache-Control") == "no-cache")
        Self.expectSecurityHeaders(page, "page")
        let tag = try #require(page.header("ETag"))
        #expect(tag.hasPrefix("\"") && tag.count == 18)
        // No inline script: every script element loads a file of the dashboard's.
        let scripts = page.text.components(separatedBy: "<script").dropFirst()
        #expect(scripts.count == 6)
        #expect(scripts.allSatisfy { $0.hasPrefix(" src=\"/_/assets/") && $0.contains("></script>") })
        let again = try await server.client.send("GET", "/_/", headers: [("If-None-Match", tag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("ETag") == tag)
        Self.expectSecurityHeaders(again, "304")
        let head = try await server.client.send("HEAD", "/_/")
        #expect(head.status == 200 && head.body.isEmpty)
        for (name, type) in [
            ("app.js", "text/javascript; charset=utf-8"), ("api.js", "text/javascript; charset=utf-8"),
            ("ui.js", "text/javascript; charset=utf-8"), ("data.js", "text/javascript; charset=utf-8"),
            ("users.js", "text/javascript; charset=utf-8"), ("object.js", "text/javascript; charset=utf-8"),
            ("dashboard.css", "text/css; charset=utf-8"),
        ] {
            let file = try await server.client.send("GET", "/_/assets/\(name)")
            #expect(file.status == 200, "\(name)")
            #expect(file.header("Content-Type") == type, "\(name)")
            Self.expectSecurityHeaders(file, name)
            let fileTag = try #require(file.header("ETag"))
            #expect(fileTag != tag)
            let cached = try await server.client.send(
                "GET", "/_/assets/\(name)", headers: [("If-None-Match", "\"other\", \(fileTag)")])
            #expect(cached.status == 304, "\(name)")
            if name.hasSuffix(".js") {
                // Data reaches the page as text only: no HTML parsed from strings, no eval.
                for banned in [
                    "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                ] {
                    #expect(!file.text.contains(banned), "\(name) uses \(banned)")
                }
            }
        }
    }

    @Test("client-side routes are the page; unknown files are 404; /_ redirects; only GET and HEAD")
    func routing() async throws {
        let server = try await TestServer()
        defer { Task { await server.stop() } }
        let page = try await server.client.send("GET", "/_/")
        for path in ["/_/login", "/_/collections/Note", "/_/collections/Note/abc?x=1", "/_/users/u1"] {
            let routed = try await server.client.send("GET", path)
            #expect(routed.status == 200, "\(path)")
            #expect(routed.body == page.body, "\(path)")
        }
        for path in ["/_/assets/nope.js", "/_/assets/", "/_/favicon.ico", "/_/collections/app.js"] {
            let missing = try await server.client.send("GET", path)
            #expect(missing.status == 404, "\(path)")
            #expect(missing.json["code"] as? String == "not_found", "\(path)")
            Self.expectSecurityHeaders(missing, path)
        }
        let bare = try await server.client.send("GET", "/_")
        #expect(bare.status == 301)
        #expect(bare.header("Location") == "/_/")
        for method in ["POST", "PUT", "DELETE"] {
            let refused = try await server.client.send(method, "/_/", json: "{}")
            #expect(refused.status == 405, "\(method)")
            #expect(refused.header("Allow") == "GET, HEAD")
            #expect(refused.json["code"] as? String == "method_not_allowed")
        }
    }

    @Test("/_/ stays the dashboard's when --public-dir holds a folder named _")
    func reservedFromPublicFiles() async throws {
        let site = TestServer.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: site + "/_/assets", withIntermediateDirectories: true)
        try Data("site page".utf8).write(to: URL(fileURLWithPath: site + "/index.html"))
        try Data("not the dashboard".utf8).write(to: URL(fileURLWithPath: site + "/_/index.html"))
        try Data("alert(1)".utf8).write(to: URL(fileURLWithPath: site + "/_/assets/app.js"))
        try Data("a file".utf8).write(to: URL(fileURLWithPath: site + "/_/notes.txt"))
        let server = try await TestServer { configuration in configuration.publicDirectory = site }
        defer { Task { await server.stop() } }
        #expect(try await server.client.send("GET", "/").text == "site page")
        let page = try await server.client.send("GET", "/_/")
        #expect(page.text.contains("Roost dashboard"))
        let script = try await server.client.send("GET", "/_/assets/app.js")
        #expect(script.text.contains("RD.app"))
        #expect(try await server.client.send("GET", "/_/notes.txt").status == 404)
    }
}
