import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// `--public-dir` and `--app-prefix`: a FatFractal web app and its API on one origin (issue 18).
@Suite("Static hosting") struct StaticHostingTests {
    /// A web app folder: index.html, a script, a folder without an index, a dot file, and a
    /// symbolic link that leads outside.
    func makeSite() throws -> String {
        let root = TestServer.makeTemporaryDirectory()
        let site = root + "/webapp"
        let manager = FileManager.default
        try manager.createDirectory(atPath: site + "/Scripts", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: site + "/empty", withIntermediateDirectories: true)
        try Data("<p>hello</p>".utf8).write(to: URL(fileURLWithPath: site + "/index.html"))
        try Data("var x = 1;".utf8).write(to: URL(fileURLWithPath: site + "/Scripts/app.js"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: site + "/.env"))
        try Data("outside".utf8).write(to: URL(fileURLWithPath: root + "/outside.txt"))
        try manager.createSymbolicLink(atPath: site + "/leak.txt", withDestinationPath: root + "/outside.txt")
        // Links inside the folder whose real paths have a dot segment: `env.txt → .env`,
        // `gitdir/ → .git/`.
        try manager.createDirectory(atPath: site + "/.git", withIntermediateDirectories: true)
        try Data("[core] secret".utf8).write(to: URL(fileURLWithPath: site + "/.git/config"))
        try manager.createSymbolicLink(atPath: site + "/env.txt", withDestinationPath: site + "/.env")
        try manager.createSymbolicLink(atPath: site + "/gitdir", withDestinationPath: site + "/.git")
        return site
    }

    func server(site: String, prefix: String? = nil) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.publicDirectory = site
            configuration.appPrefix = prefix
            configuration.appDefinition = openRules
        }
    }

    @Test func servesFilesWithTypesTagsAndRanges() async throws {
        let server = try await server(site: try makeSite())
        let index = try await server.client.send("GET", "/")
        #expect(index.status == 200)
        #expect(index.text == "<p>hello</p>")
        #expect(index.header("Content-Type") == "text/html; charset=utf-8")
        let script = try await server.client.send("GET", "/Scripts/app.js")
        #expect(script.text == "var x = 1;")
        #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
        let tag = try #require(script.header("ETag"))
        let again = try await server.client.send("GET", "/Scripts/app.js", headers: [("If-None-Match", tag)])
        #expect(again.status == 304)
        let part = try await server.client.send("GET", "/Scripts/app.js", headers: [("Range", "bytes=4-4")])
        #expect(part.status == 206)
        #expect(part.text == "x")
        #expect(part.header("Content-Range") == "bytes 4-4/10")
        let outside = try await server.client.send(
            "GET", "/Scripts/app.js", headers: [("Range", "bytes=10-")])
        #expect(outside.status == 416)
        #expect(outside.header("Content-Range") == "bytes */10")
        #expect(outside.json["code"] as? String == "range_not_satisfiable")
        #expect(outside.json["message"] as? String == "The range lies outside the file's 10 bytes.")
        let folder = try await server.client.send("GET", "/Scripts")
        #expect(folder.status == 301)
        #expect(folder.header("Location") == "/Scripts/")
    }

    @Test(arguments: [
        "/empty/", "/.env", "/leak.txt", "/../outside.txt", "/%2e%2e/outside.txt",
        "/Scripts%2f..%2f..%2foutside.txt",
        "/index.html%00.js", "/nothing.html", "/env.txt", "/gitdir/config", "/gitdir/",
    ])
    func refusesListingsDotFilesAndEscapes(path: String) async throws {
        let server = try await server(site: try makeSite())
        let answer = try await server.client.send("GET", path)
        #expect(answer.status == 404 || answer.status == 400, "\(path): \(answer.status)")
        #expect(!answer.text.contains("outside"))
        #expect(!answer.text.contains("secret"))
    }

    /// The same from the app definition, the folder relative to the definition file.
    @Test func theAppDefinitionCanHostTheApp() async throws {
        let site = try makeSite()
        let folder = URL(fileURLWithPath: site).deletingLastPathComponent().path
        let definition = folder + "/roost.json"
        try Data(#"{"hosting":{"publicDir":"webapp","appPrefix":"wouldya"}}"#.utf8)
            .write(to: URL(fileURLWithPath: definition))
        let server = try await TestServer { configuration in configuration.appDefinitionPath = definition }
        let page = try await server.client.send("GET", "/wouldya/")
        #expect(page.text == "<p>hello</p>")
        let list = try await server.client.send("GET", "/wouldya/ff/resources/Celebrity")
        #expect(list.text == #"{"items":[]}"#)
        #expect(throws: AppDefinitionError.self) {
            try AppDefinition.parse(Array(#"{"hosting":{"appPrefix":"a/b"}}"#.utf8))
        }
        #expect(throws: AppDefinitionError.self) {
            try AppDefinition.parse(Array(#"{"hosting":{"appPrefix":"ff"}}"#.utf8))
        }
    }

    @Test func theAPIStaysTheAPI() async throws {
        let server = try await server(site: try makeSite())
        let health = try await server.client.send("GET", "/health")
        #expect(health.text == #"{"status":"ok"}"#)
        let list = try await server.client.send("GET", "/ff/resources/Celebrity")
        #expect(list.text == #"{"items":[]}"#)
    }

    @Test func anAppPrefixReachesTheAPIAndTheFiles() async throws {
        let server = try await server(site: try makeSite(), prefix: "hoodyoodoo")
        let created = try await server.client.send(
            "POST", "/hoodyoodoo/ff/resources/Celebrity", headers: fatFractalHeaders,
            body: Array(#"{"clazz":"Celebrity","name":"Ada"}"#.utf8))
        #expect(created.status == 201, "\(created.text)")
        let url = try #require(created.result["ffUrl"] as? String)
        let read = try await server.client.send("GET", "/hoodyoodoo" + url + "?depthRef=0")
        #expect(read.json["name"] as? String == "Ada")
        // A blob upload under the prefix streams like one without it.
        let blob = try await server.client.send(
            "PUT", "/hoodyoodoo" + url + "/imageData",
            headers: [("Data-type", "application/octet-stream"), ("Content-type", "image/png")],
            body: [1, 2, 3])
        #expect(blob.status == 200, "\(blob.text)")
        let bytes = try await server.client.send("GET", "/hoodyoodoo" + url + "/imageData")
        #expect(bytes.body == [1, 2, 3])
        let page = try await server.client.send("GET", "/hoodyoodoo/index.html")
        #expect(page.text == "<p>hello</p>")
        // A folder's redirect keeps the prefix (and the query).
        let folder = try await server.client.send("GET", "/hoodyoodoo/Scripts?v=2")
        #expect(folder.status == 301)
        #expect(folder.header("Location") == "/hoodyoodoo/Scripts/?v=2")
        let app = try await server.client.send("GET", "/hoodyoodoo")
        #expect(app.status == 301)
        #expect(app.header("Location") == "/hoodyoodoo/")
    }
}
