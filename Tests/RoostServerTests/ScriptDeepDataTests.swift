import Foundation
import RoostCore
import RoostJSON
import RoostServer
import RoostTestSupport
import Testing

/// Issue 24, item 5: data nested as deep as the server accepts reaches scripts and comes back
/// without costing a worker; what is nested deeper fails the one run or call, never the worker.
@Suite("Deep data and the script workers")
struct ScriptDeepDataTests {
    /// As deep as a body may be: JSON nested deeper is not parsed as JSON.
    static let acceptedDepth = JSONParser.defaultMaximumDepth

    static let module = #"""
        var ff = require('ffef/FatFractal');
        function nested(levels) { var v = 1; for (var i = 0; i < levels; i++) v = [v]; return v; }
        exports.echo = function () { return ff.getExtensionRequestData().httpContent; };
        exports.readAll = function () { return ff.getArrayFromUri('/Deep'); };
        exports.readOne = function () {
            var guid = ff.getExtensionRequestData().httpParameters.guid;
            return ff.getObjFromUri('/ff/resources/Deep/' + guid);
        };
        exports.touch = function () { ff.getEventHandlerData().touched = true; };
        exports.tooDeepToAnswer = function () { return nested(900); };
        exports.storeTooDeep = function () {
            var codes = [];
            [540, 700].forEach(function (levels) {
                try { ff.createObjAtUri({v: nested(levels)}, '/Deep'); codes.push('stored'); }
                catch (e) { codes.push(e.code); }
            });
            return codes;
        };
        """#

    static func makeServer() async throws -> TestServer {
        var definition = try AppDefinition.parse(
            Array(
                #"{"collections": {"*": {"rules": {"create": "public", "read": "public", "list": "public"}}}}"#
                    .utf8))
        definition.scripts.modules = ["scripts/Deep": module]
        func entry(_ function: String) -> ScriptEntry {
            ScriptEntry(module: "scripts/Deep", function: function)
        }
        for name in ["echo", "readAll", "readOne", "tooDeepToAnswer", "storeTooDeep"] {
            definition.scripts.extensions[name] = ScriptExtension(
                name: name, secured: false, entry: entry(name))
        }
        definition.scripts.handlers = [
            ScriptHandler(
                name: "Touch", collection: "Deep", events: [.create], phase: .pre, entry: entry("touch"))
        ]
        return try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.scripts.workers = 1
        }
    }

    static func nested(_ levels: Int) -> String {
        String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
    }

    @Test(
        "a body, an object and a read result nested at the accepted depth reach the script and come back; the worker stays"
    )
    func acceptedDepthKeepsTheWorker() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let runtime = server.application.scriptRuntime
        let warm = try await server.client.send(
            "POST", "/ff/ext/echo", headers: fatFractalHeaders, body: Array("[1]".utf8))
        #expect(warm.status == 200)
        let workers = runtime.workerProcessIDs
        let starts = runtime.metrics.workerStarts
        #expect(workers.count == 1)

        let body = Self.nested(Self.acceptedDepth)
        let echoed = try await server.client.send(
            "POST", "/ff/ext/echo", headers: fatFractalHeaders, body: Array(body.utf8))
        #expect(echoed.status == 200)
        let echoedBack = echoed.text.contains(body)
        #expect(echoedBack)

        // An object whose field makes it as deep as a body may be, through a PRE handler.
        let field = Self.nested(Self.acceptedDepth - 1)
        let created = try await server.client.send(
            "POST", "/ff/resources/Deep", headers: fatFractalHeaders, body: Array(#"{"v":\#(field)}"#.utf8))
        #expect(created.status == 201)
        // The answer wraps the object once more: read past Foundation's own depth limit.
        let answer = try JSONParser.parse(Array(created.text.utf8), maximumDepth: 2 * Self.acceptedDepth)
        let guid = try #require(answer.objectValue?["result"]?.objectValue?["guid"]?.stringValue)
        let one = try await server.client.send(
            "GET", "/ff/ext/readOne?guid=\(guid)", headers: fatFractalHeaders)
        #expect(one.status == 200)
        #expect(one.text.contains(#""touched":true"#))
        let all = try await server.client.send("GET", "/ff/ext/readAll", headers: fatFractalHeaders)
        #expect(all.status == 200)
        let listedBack = all.text.contains(field)
        #expect(listedBack)

        #expect(runtime.workerProcessIDs == workers)
        #expect(runtime.metrics.workerStarts == starts)
    }

    @Test("a script's own data nested deeper than a body may be fails its call or its run, not the worker")
    func deeperFailsTheRun() async throws {
        let server = try await Self.makeServer()
        defer { Task { await server.stop() } }
        let runtime = server.application.scriptRuntime
        let warm = try await server.client.send(
            "POST", "/ff/ext/echo", headers: fatFractalHeaders, body: Array("[1]".utf8))
        #expect(warm.status == 200)
        let workers = runtime.workerProcessIDs

        let answer = try await server.client.send(
            "GET", "/ff/ext/tooDeepToAnswer", headers: fatFractalHeaders)
        #expect(answer.status == 500)
        #expect(answer.json["code"] as? String == "script_failed")
        let stored = try await server.client.send("GET", "/ff/ext/storeTooDeep", headers: fatFractalHeaders)
        #expect(stored.status == 200)
        #expect(
            stored.json["result"] as? [String] == ["invalid_script_argument", "script_message_too_deep"])
        let listed = try await server.client.send("GET", "/ff/resources/Deep", headers: fatFractalHeaders)
        #expect((listed.json["result"] as? [Any])?.count == 0)

        #expect(runtime.workerProcessIDs == workers)
        #expect(runtime.metrics.workerStarts == 1)
    }
}
