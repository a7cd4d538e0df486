import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Synchronization
import Testing

/// Instances on one PostgreSQL database when something fails: an instance killed mid-write, the
/// database going away and coming back (issue 15).
@Suite("Failures with instances on one PostgreSQL database")
struct SharedDatabaseFailureTests {
    @Test("SIGKILL of one instance under write load loses no acknowledged write; the other keeps serving")
    func aKilledInstanceLosesNoAcknowledgedWrite() async throws {
        let url = try await TestBackend.databaseURL(for: TestServer.makeTemporaryDirectory())
        let a = try RoostProcess(
            dataDirectory: TestServer.makeTemporaryDirectory(), arguments: ["--database", url])
        let b = try RoostProcess(
            dataDirectory: TestServer.makeTemporaryDirectory(), arguments: ["--database", url])
        let clientB = TestHTTPClient(port: b.port)
        let registered = try await clientB.send(
            "POST", "/ff/register", json: #"{"userName":"writer","password":"correct horse battery"}"#)
        let token = try #require(registered.json["token"] as? String)
        let acknowledged = Acknowledged()
        let writers = (0..<4).map { writer in
            Task {
                let client = TestHTTPClient(port: a.port)
                for number in 0..<100_000 {
                    guard
                        let created = try? await client.send(
                            "POST", "/ff/resources/Note", json: #"{"writer":\#(writer),"n":\#(number)}"#,
                            headers: [("X-Token", token)]),
                        created.status == 201, let guid = created.json["guid"] as? String
                    else { return }
                    acknowledged.guids.withLock { $0.append(guid) }
                }
            }
        }
        let busy = await eventually(within: 60) { acknowledged.guids.withLock { $0.count } >= 300 }
        #expect(busy, "the writers got going")
        a.process.signal(SIGKILL)
        _ = try await a.process.exit()
        for writer in writers { await writer.value }
        let written = acknowledged.guids.withLock { $0 }
        var missing: [String] = []
        for guid in written {
            let read = try await clientB.send(
                "GET", "/ff/resources/Note/\(guid)", headers: [("X-Token", token)])
            if read.status != 200 { missing.append(guid) }
        }
        #expect(missing.isEmpty, "\(missing.count) of \(written.count) acknowledged creates are missing")
        let after = try await clientB.send(
            "POST", "/ff/resources/Note", json: #"{"after":true}"#, headers: [("X-Token", token)])
        #expect(after.status == 201, "the other instance keeps serving writes")
        #expect(try await b.stop(signal: SIGTERM) == 0)
    }

    @Test(
        "while the database is down requests answer 503 database_unavailable at once, and the server recovers by itself"
    )
    func theDatabaseGoesAwayAndComesBack() async throws {
        // A cluster of this test's own: stopping the shared one would fail the others.
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-pg-outage-\(UUID().uuidString.prefix(8))").path
        let url = try runClusterScript(["start", folder])
        defer { _ = try? runClusterScript(["stop", folder]) }
        let server = try await TestServer { configuration in
            configuration.databaseURL = url
            configuration.databaseConnections = 2
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        let registered = try await server.client.send(
            "POST", "/ff/register", json: #"{"userName":"olive","password":"correct horse"}"#)
        let token = try #require(registered.json["token"] as? String)
        let auth = [("X-Token", token)]
        #expect(
            try await server.client.send("POST", "/ff/resources/Note", json: "{}", headers: auth).status
                == 201)

        try runClusterScript(["halt", folder])
        for (method, path, body) in [
            ("GET", "/ff/resources/Note", nil), ("POST", "/ff/resources/Note", "{}"),
            ("POST", "/ff/login", #"{"userName":"olive","password":"correct horse"}"#),
        ] {
            let started = ContinuousClock.now
            let response: TestResponse
            if let body {
                response = try await server.client.send(method, path, json: body, headers: auth)
            } else {
                response = try await server.client.send(method, path, headers: auth)
            }
            let waited = ContinuousClock.now - started
            #expect(response.status == 503, "\(method) \(path)")
            #expect(response.json["code"] as? String == "database_unavailable", "\(method) \(path)")
            #expect(response.header("Retry-After") == "5", "\(method) \(path)")
            #expect(waited < .seconds(10), "\(method) \(path) answered without waiting for the database")
        }
        #expect(try await server.client.send("GET", "/health").status == 200)

        _ = try runClusterScript(["start", folder])
        let recovered = await eventually(within: 30) {
            (try? await server.client.send("GET", "/ff/resources/Note?total=true", headers: auth).status)
                == 200
        }
        #expect(recovered, "the server serves again once the database is back, without a restart")
        let listed = try await server.client.send("GET", "/ff/resources/Note?total=true", headers: auth)
        #expect(listed.json["total"] as? Int == 1)
        await server.stop()
    }
}

/// The creates the server acknowledged, from several writers.
private final class Acknowledged: Sendable {
    let guids = Mutex<[String]>([])
}
