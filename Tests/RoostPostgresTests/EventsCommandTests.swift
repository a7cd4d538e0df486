import Foundation
import RoostCore
import RoostJSON
import RoostPostgres
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

@Suite("roost events")
struct EventsCommandTests {
    /// A data folder (or PostgreSQL database) holding two failed runs: one waiting for its retry,
    /// one given up. Returns the arguments that name it.
    private func withFailedRuns(_ backend: Backend, _ body: ([String], any Storage) async throws -> Void)
        async throws
    {
        let directory = NSTemporaryDirectory() + "roost-events-cli-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func seed(_ storage: any Storage) async throws {
            try await storage.objectStore.insert(object("Post", "p1"))
            try await storage.objectStore.insert(object("Vote", "v1"))
            #expect(try await storage.scriptOutbox.claimLease(holder: "test", for: .seconds(30)))
            let failures = [
                RunFailure(
                    sequence: 1, handler: "Count", attempts: 2, error: "TypeError: x is\nundefined",
                    nextAttempt: 4_102_444_800_000),
                RunFailure(sequence: 2, handler: "Tally", attempts: 8, error: "boom", nextAttempt: nil),
            ]
            #expect(
                try await storage.scriptOutbox.complete(
                    through: 2, failures: failures, holder: "test", lease: .seconds(30)))
        }
        switch backend {
        case .sqlite:
            let storage = try SQLiteStorage(directory: directory, collections: .builtIn)
            try await seed(storage)
            try await body(["--data-dir", directory], storage)
            await storage.close()
        case .postgres:
            try await withPostgresStorage { storage in
                try await seed(storage)
                try await body(["--database", storage.database.configuration.connectionString], storage)
            }
        }
    }

    @Test("failed lists the runs waiting and given up; --json gives every field", arguments: Backend.allCases)
    func listing(_ backend: Backend) async throws {
        try await withFailedRuns(backend) { location, _ in
            let table = try await runRoost(["events", "failed"] + location)
            #expect(table.status == 0)
            let lines = table.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            #expect(lines[0].hasPrefix("HANDLER") && lines[0].contains("LAST ERROR"))
            #expect(
                lines[1].hasPrefix("Count") && lines[1].contains("Post:1") && lines[1].contains("2100-01-01"))
            #expect(lines[1].hasSuffix("TypeError: x is undefined"))
            #expect(
                lines[2].hasPrefix("Tally") && lines[2].contains("Vote:2") && lines[2].contains("gave up"))
            let json = try await runRoost(["events", "failed", "--json"] + location)
            #expect(json.status == 0)
            let expected = """
                [{"handler":"Count","eventId":"Post:1","attempts":2,"error":"TypeError: x is\\nundefined",\
                "nextAttempt":4102444800000,"state":"pending","trimmed":false},\
                {"handler":"Tally","eventId":"Vote:2","attempts":8,"error":"boom","nextAttempt":null,\
                "state":"failed","trimmed":false}]
                """
            #expect(try JSONParser.parse(Array(json.output.utf8)) == JSONParser.parse(Array(expected.utf8)))
        }
    }

    @Test("retry re-queues the named runs, or --all, due now", arguments: Backend.allCases)
    func retrying(_ backend: Backend) async throws {
        try await withFailedRuns(backend) { location, storage in
            let before = nowMilliseconds()
            let one = try await runRoost(["events", "retry", "Vote:2"] + location)
            #expect(
                one.status == 0 && one.output == "re-queued 1 failed run; a running server retries them now\n"
            )
            let due = try await storage.scriptOutbox.dueRetries(now: nowMilliseconds(), limit: 10)
            #expect(due.map(\.eventID) == ["Vote:2"] && due[0].attempts == 0 && due[0].nextAttempt! >= before)
            let missing = try await runRoost(["events", "retry", "Vote:9"] + location)
            #expect(
                missing.status == 67
                    && missing.errorOutput == "roost: no failed run of Vote:9 can be retried\n")
            let all = try await runRoost(["events", "retry", "--all"] + location)
            #expect(all.status == 0 && all.output.hasPrefix("re-queued 2 failed runs"))
            #expect(try await storage.scriptOutbox.dueRetries(now: nowMilliseconds(), limit: 10).count == 2)
        }
    }

    @Test("usage errors exit 64 with the reason; --help prints the help")
    func usage() async throws {
        let directory = NSTemporaryDirectory() + "roost-events-usage-" + UUID().uuidString
        let bad = try await runRoost(["events", "retry", "nonsense", "--data-dir", directory])
        #expect(bad.status == 64 && bad.errorOutput.contains("'nonsense' is not an event id"))
        let neither = try await runRoost(["events", "retry", "--data-dir", directory])
        #expect(neither.status == 64 && neither.errorOutput.contains("takes --all or event ids"))
        let both = try await runRoost(["events", "retry", "--all", "Post:1", "--data-dir", directory])
        #expect(both.status == 64)
        let help = try await runRoost(["events", "--help"])
        #expect(help.status == 0 && help.output.contains("roost events failed [--json]"))
        #expect(try await runRoost(["help", "events"]).output == help.output)
        #expect(try await runRoost(["events", "frobnicate"]).status == 64)
    }
}
