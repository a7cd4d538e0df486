import Foundation
import RoostTestSupport
import Testing

/// Issue 31, item 1: `/openapi.json`, generated from the routes the router declares.
@Suite("OpenAPI")
struct OpenAPITests {
    static let schemathesis = sourceRoot + "/.build/browser-venv/bin/schemathesis"

    @Test("every route is in /openapi.json with a summary, its parameters and the error shape")
    func everyRouteIsDescribed() async throws {
        let server = try await makeOpenServer()
        let answer = try await server.client.send("GET", "/openapi.json")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
        #expect(answer.json["openapi"] as? String == "3.1.0")
        let paths = try #require(answer.json["paths"] as? [String: [String: [String: Any]]])
        var operations: [String] = []
        for (path, item) in paths {
            for (method, operation) in item {
                operations.append("\(method.uppercased()) \(path)")
                #expect(operation["summary"] is String, "\(method) \(path) has no RouteDocumentation")
                let responses = operation["responses"] as? [String: Any]
                #expect(responses?["default"] != nil, "\(method) \(path)")
            }
        }
        for expected in [
            "GET /health", "GET /openapi.json", "POST /ff/login", "GET /ff/resources/{collection}/{query}",
            "PUT /ff/resources/{collection}/{guid}/{member}", "GET /ff/events", "POST /ff/push",
        ] {
            #expect(operations.contains(expected), "\(expected) is missing")
        }
        let read = try #require(paths["/ff/resources/{collection}/{guid}"]?["get"])
        let parameters = (read["parameters"] as? [[String: Any]] ?? []).map {
            "\($0["in"] as? String ?? "") \($0["name"] as? String ?? "") \($0["required"] as? Bool ?? false)"
        }
        #expect(parameters == ["path collection true", "path guid true", "query depthRef false"])
        let events = try #require(paths["/ff/events"]?["get"]?["responses"] as? [String: [String: Any]])
        #expect((events["200"]?["content"] as? [String: Any])?.keys.first == "text/event-stream")
        let schemas = (answer.json["components"] as? [String: Any])?["schemas"] as? [String: Any]
        #expect(
            (schemas?["Error"] as? [String: Any])?["required"] as? [String] == ["status", "code", "message"])
        await server.stop()
    }

    /// CI's bounded, seeded run unless the environment asks for another (to explore locally).
    static func setting(_ name: String, default value: String) -> String {
        ProcessInfo.processInfo.environment[name] ?? value
    }

    /// Schemathesis (PyPI) generates requests from the document, bounded and seeded, as an
    /// administrator: no answer may be a 5xx, and every answer must match what is documented.
    @Test(
        "schemathesis: no server error, every answer as documented",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: schemathesis),
            "schemathesis is not installed (scripts/install-deps.sh --browser-tests)"))
    func schemathesisFindsNothing() async throws {
        let directory = try await makeDataFolder()
        let made = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(made.status == 0, "\(made.errorOutput)")
        // With push and mail configured (to fakes), so POST /ff/push and /ff/password/reset do
        // their work instead of answering 503.
        let gateway = try await FakeAPNs.start(authority: try await TestCertificateAuthority())
        let smtp = try await FakeSMTP.start()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: ["--app", try writeOpenDefinition(beside: directory)] + gateway.serveArguments
                + smtp.serveArguments)
        let token = try await TestHTTPClient(port: server.port).login("dave", password: "dave-password")
        let run = try await runProgram(
            Self.schemathesis,
            [
                "run", "http://127.0.0.1:\(server.port)/openapi.json", "--header", "X-Token: \(token)",
                "--header", "Authorization: Bearer \(token)", "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                "--max-examples", Self.setting("ROOST_TEST_SCHEMATHESIS_EXAMPLES", default: "20"), "--seed",
                Self.setting("ROOST_TEST_SCHEMATHESIS_SEED", default: "1"), "--workers", "1", "--no-color",
                // These end the session the run authenticates with; the event stream never ends.
                "--exclude-path", "/ff/logout", "--exclude-path", "/ff/tokens/{id}", "--exclude-path",
                "/ff/password", "--exclude-path", "/ff/admin/sessions/{id}", "--exclude-path", "/ff/events",
                "--report-dir", directory + "-schemathesis",
            ])
        let summary = run.output.components(separatedBy: "FAILURES").last ?? run.output
        #expect(run.status == 0, "\(summary.suffix(6000))\(run.errorOutput.suffix(2000))")
        #expect(run.output.contains(" passed"), "\(run.output.suffix(2000))")
        #expect(try await server.stop(signal: SIGTERM) == 0)
        await gateway.fake.stop()
        await smtp.stop()
    }
}
