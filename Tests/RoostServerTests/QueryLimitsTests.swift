import Foundation
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

/// A public collection where `^(a|a)*$` backtracks for minutes on every row.
private func makeBacktrackingServer(timeout: Duration, threads: Int = 2) async throws -> TestServer {
    let server = try await TestServer { configuration in
        configuration.appDefinition = openRules
        configuration.readLimits = ReadLimits(threads: threads, timeout: timeout)
    }
    let value = String(repeating: "a", count: 28) + "!"
    for index in 0..<30 {
        let created = try await server.client.send(
            "POST", "/ff/resources/Word", json: #"{"guid":"w\#(index)","text":"\#(value)"}"#)
        guard created.status == 201 else { throw TestClientError(description: created.text) }
    }
    return server
}

private let backtracking = "/ff/resources/Word/" + encodeQuery("(text matches '^(a|a)*$')")

@Suite("Query limits: shape, regular expressions, deadline")
struct QueryLimitsTests {
    static func terms(_ count: Int, path: String = "a") -> String {
        "(" + (0..<count).map { "\(path) eq \($0)" }.joined(separator: " or ") + ")"
    }

    static let shapes: [(String, String)] = [
        (terms(33), "the query has 33 terms; at most 32 are allowed"),
        ("(a.b.c.d.e.f.g.h.i eq 1)", "a field path in the query has 9 parts; at most 8 are allowed"),
        (
            terms(9, path: "a.b.c"),
            "the query's dotted paths need 18 joins through references; at most 16 are allowed (a path of n parts needs n - 1)"
        ),
        ("(a matches 'x{1001}')", "a counted repeat in a regular expression may be at most {1000}"),
        (
            "(a matches '\(String(repeating: "b", count: 257))')",
            "a regular expression may have at most 256 characters"
        ),
    ]

    @Test(
        "queries over a limit of their shape are refused with 400 invalid_query naming it", arguments: shapes)
    func shapeLimits(query: String, message: String) async throws {
        let server = try await makeOpenServer()
        for path in [
            "/ff/resources/Word/\(encodeQuery(query))",
            "/ff/resources/Word/\(encodeQuery("(" + query + " and guid eq random(guid))"))",
        ] {
            let response = try await server.client.send("GET", path)
            #expect(response.status == 400)
            #expect(response.json["code"] as? String == "invalid_query")
            #expect(response.json["message"] as? String == message)
        }
        await server.stop()
    }

    @Test("the largest allowed shape still runs")
    func largestAllowedShape() async throws {
        let server = try await makeOpenServer()
        let response = try await server.client.send(
            "GET", "/ff/resources/Word/\(encodeQuery(Self.terms(8, path: "a.b.c")))")
        #expect(response.status == 200)
        await server.stop()
    }

    // PostgreSQL's regular expressions do not backtrack, so this query is fast there; the
    // driver's tests hold its statement_timeout to the deadline instead.
    @Test(
        "a query past the deadline answers 503 query_timeout and the server keeps answering",
        .enabled(if: TestBackend.isSQLite))
    func deadline() async throws {
        let server = try await makeBacktrackingServer(timeout: .seconds(2))
        let finished = Atomic<Bool>(false)
        let hostile = Task {
            defer { finished.store(true, ordering: .relaxed) }
            return try await TestHTTPClient(port: server.port).send("GET", backtracking)
        }
        let second = Task { try await TestHTTPClient(port: server.port).send("GET", backtracking) }
        // Both reader threads are busy with the hostile queries; the loops still serve.
        let health = try await server.client.send("GET", "/health")
        #expect(health.status == 200)
        let single = try await server.client.send("GET", "/ff/resources/Word/w1")
        #expect(single.status == 200)
        let hostileEnded = finished.load(ordering: .relaxed)
        #expect(!hostileEnded, "the hostile query ended before /health was served")
        for response in [try await hostile.value, try await second.value] {
            #expect(response.status == 503)
            #expect(response.json["code"] as? String == "query_timeout")
            #expect((response.json["details"] as? [String: Any])?["timeoutSeconds"] as? String == "2")
        }
        // Queries that fit in the deadline still work on the same threads.
        let fine = try await server.client.send(
            "GET", "/ff/resources/Word/\(encodeQuery("(text matches '^a+!$')"))")
        #expect(fine.status == 200)
        #expect((fine.json["items"] as? [Any])?.count == 30)
        await server.stop()
    }

    @Test("a client that disconnects stops its query, freeing the query thread at once")
    func disconnectInterrupts() async throws {
        // One query thread and a deadline far beyond the client's patience below.
        let server = try await makeBacktrackingServer(timeout: .seconds(120), threads: 1)
        let hostile = try RawConnection(port: server.port)
        hostile.send("GET \(backtracking) HTTP/1.1\r\nHost: x\r\n\r\n")
        // Once the query runs on the only thread, hang up.
        let gauge = TestBackend.isSQLite ? "roost_sqlite_reads_running " : "roost_postgres_jobs_running "
        #expect(
            await eventually {
                let text = (try? await server.liveClient.send("GET", "/metrics"))?.text ?? ""
                let line = text.split(separator: "\n").first { $0.hasPrefix(gauge) }
                return (line.flatMap { Int($0.dropFirst(gauge.count)) } ?? 0) >= 1
            })
        hostile.hangUp()
        // The only query thread is free again only if the hostile query was interrupted.
        let client = TestHTTPClient(port: server.port)
        let page = try await client.send("GET", "/ff/resources/Word?count=5")
        #expect(page.status == 200)
        #expect((page.json["items"] as? [Any])?.count == 5)
        await server.stop()
    }

    @Test("random picks and totals obey the deadline too", .enabled(if: TestBackend.isSQLite))
    func deadlineForRandomAndTotal() async throws {
        let server = try await makeBacktrackingServer(timeout: .milliseconds(500))
        let random = "/ff/resources/Word/" + encodeQuery("(text matches '^(a|a)*$' and guid eq random(guid))")
        for path in [random, backtracking + "?total=true&count=1"] {
            let response = try await server.client.send("GET", path)
            #expect(response.status == 503)
            #expect(response.json["code"] as? String == "query_timeout")
        }
        await server.stop()
    }
}
