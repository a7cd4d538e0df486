import Foundation
import RoostSQLite
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

/// Guids whose create the server acknowledged.
final class Acknowledged: Sendable {
    private let guids = Mutex<[String]>([])
    func add(_ guid: String) { guids.withLock { $0.append(guid) } }
    var all: [String] { guids.withLock { $0 } }
}

@Suite("Crash safety of the real binary")
struct CrashTests {
    @Test("SIGKILL mid-load loses no acknowledged create and leaves the database intact")
    func killDuringWrites() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let open = ["--app", try writeOpenDefinition(beside: directory)]
        let server = try RoostProcess(dataDirectory: directory, arguments: open)
        let client = TestHTTPClient(port: server.port)
        let acknowledged = Acknowledged()
        let answered = TestCounter()
        let writers = Task {
            defer { answered.finish() }
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<6 {
                    group.addTask {
                        for index in 0..<100_000 {
                            // Client-chosen guids, so an unanswered create is known by its guid too.
                            let guid = "w\(writer)-\(index)"
                            guard
                                let response = try? await client.send(
                                    "POST", "/ff/resources/Crash",
                                    json:
                                        #"{"guid":"\#(guid)","payload":"\#(String(repeating: "x", count: 200))"}"#
                                ),
                                response.status == 201
                            else { return }
                            acknowledged.add(guid)
                            answered.add()
                        }
                    }
                }
            }
        }
        #expect(await answered.reach(400), "the writers stopped before 400 creates were answered")
        let status = try await server.stop(signal: SIGKILL)
        #expect(status == SIGKILL)
        await writers.value
        let saved = acknowledged.all
        #expect(saved.count >= 400)

        let restarted = try RoostProcess(dataDirectory: directory, arguments: open)
        let reader = TestHTTPClient(port: restarted.port)
        var missing: [String] = []
        for guid in saved where try await reader.send("GET", "/ff/resources/Crash/\(guid)").status != 200 {
            missing.append(guid)
        }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
        try await restarted.stop(signal: SIGTERM)

        let database = try SQLiteDatabase(path: directory + "/roost.sqlite", migrations: [])
        let check = try database.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } }
        #expect(check == "ok")
    }

    @Test("SIGTERM stops the server cleanly with status 0")
    func gracefulStop() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory, arguments: ["--app", try writeOpenDefinition(beside: directory)])
        let created = try await TestHTTPClient(port: server.port).send("POST", "/ff/resources/A", json: "{}")
        #expect(created.status == 201)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }
}
