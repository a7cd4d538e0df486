import Foundation
import RoostServer
import RoostStore
import Testing

/// One request, what must come back, and what it must cause, as in PocketBase's `ApiScenario`:
/// the default shape of an API test. A table of them runs in order against one server
/// (``TestServer/run(_:tokens:)``), each checked for its status, error code, body, headers,
/// the change-log entries it committed and the scripts it ran.
public struct APIScenario: CustomTestStringConvertible, Sendable {
    public var name: String
    /// Whose token the request carries: a key of the `tokens` given to the run; nil: nobody's.
    public var caller: String?
    public var method: String
    public var path: String
    public var headers: [(String, String)]
    public var body: String?
    public var status: Int
    /// The exact body expected, when it is predictable.
    public var exactBody: String?
    /// The error code expected, for error answers (the body's `status` must match too).
    public var code: String?
    /// Fragments the body must contain, and must not.
    public var contains: [String]
    public var excludes: [String]
    /// Headers that must be present with these values.
    public var expectedHeaders: [(String, String)]
    /// The change-log entries the request committed, as `"create Post/p1"`, in order; nil: not
    /// checked ([] checks that it committed nothing).
    public var changes: [String]?
    /// The scripts the request ran, by name, and how many times; nil: not checked ([:] checks
    /// that none ran).
    public var scriptRuns: [String: Int]?

    public init(
        name: String, caller: String? = nil, method: String, path: String, headers: [(String, String)] = [],
        body: String? = nil, status: Int, exactBody: String? = nil, code: String? = nil,
        contains: [String] = [], excludes: [String] = [], expectedHeaders: [(String, String)] = [],
        changes: [String]? = nil, scriptRuns: [String: Int]? = nil
    ) {
        self.name = name
        self.caller = caller
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.status = status
        self.exactBody = exactBody
        self.code = code
        self.contains = contains
        self.excludes = excludes
        self.expectedHeaders = expectedHeaders
        self.changes = changes
        self.scriptRuns = scriptRuns
    }

    public var testDescription: String { name }

    /// Sends the request and checks every expectation; returns the answer for further checks.
    @discardableResult
    public func run(against server: TestServer, tokens: [String: String] = [:]) async throws -> TestResponse {
        var headers = headers
        if let caller {
            let token = try #require(tokens[caller], "\(name): no token for caller '\(caller)'")
            headers.append(("Authorization", "Bearer \(token)"))
        }
        let changeLog = server.application.changeLog
        let lastChange = changes == nil ? 0 : try await changeLog.window().last
        let runsBefore = scriptRuns == nil ? [:] : server.application.scriptRuntime.metrics.runCounts
        let response = try await server.client.send(
            method, path, headers: headers, body: body.map { Array($0.utf8) })
        #expect(response.status == status, "\(name): status, body \(response.text)")
        if let exactBody { #expect(response.text == exactBody, "\(name): body") }
        if let code {
            #expect(response.json["code"] as? String == code, "\(name): code in \(response.text)")
            #expect(response.json["status"] as? Int == status, "\(name): status in body")
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        }
        for fragment in contains {
            #expect(response.text.contains(fragment), "\(name): body has \(fragment)")
        }
        for fragment in excludes {
            #expect(!response.text.contains(fragment), "\(name): body lacks \(fragment)")
        }
        for (header, value) in expectedHeaders {
            #expect(response.header(header) == value, "\(name): header \(header)")
        }
        if let changes {
            let committed = try await changeLog.changes(after: lastChange, limit: 1000, maxBytes: 16 << 20)
            // Revocations are bookkeeping of tokens, not object changes.
            let described = committed.filter { $0.operation != .revoke }.map {
                "\($0.operation.rawValue) \($0.collection)/\($0.guid)"
            }
            #expect(described == changes, "\(name): change log")
        }
        if let scriptRuns {
            let after = server.application.scriptRuntime.metrics.runCounts
            let ran = after.reduce(into: [String: Int]()) { ran, entry in
                let delta = entry.value - (runsBefore[entry.key] ?? 0)
                if delta > 0 { ran[entry.key] = delta }
            }
            #expect(ran == scriptRuns, "\(name): scripts run")
        }
        return response
    }
}

extension TestServer {
    /// Runs a table of scenarios in order, each with the caller's token from `tokens`.
    public func run(_ scenarios: [APIScenario], tokens: [String: String] = [:]) async throws {
        for scenario in scenarios { try await scenario.run(against: self, tokens: tokens) }
    }
}
