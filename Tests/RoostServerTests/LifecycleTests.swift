import Foundation
import RoostServer
import RoostTestSupport
import Testing

/// Threads and descriptors of this process, from /proc.
private func processCounts() -> (threads: Int, descriptors: Int) {
    let manager = FileManager.default
    return (
        (try? manager.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1,
        (try? manager.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    )
}

/// Names of this process's threads, to show what leaked.
private func threadNames() -> [String: Int] {
    var names: [String: Int] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "?"
        names[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
    }
    return names
}

private let soloVariable = "ROOST_LIFECYCLE_SOLO"

@Suite("Application lifecycle")
struct LifecycleTests {
    /// Starts a server, uses the writer, a pooled read, a point read and the blob workers, stops it.
    static func cycle() async throws {
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            // On, with a sink that drops the lines: the access log's flusher is part of the cycle.
            configuration.accessLog = true
            configuration.accessLogSink = { _ in }
        }
        let created = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"hi"}"#)
        #expect(created.status == 201)
        let guid = try #require(created.json["guid"] as? String)
        #expect(try await server.client.send("GET", "/ff/resources/Note/\(guid)").status == 200)
        #expect(try await server.client.send("GET", "/ff/resources/Note").status == 200)
        let upload = try await server.client.send(
            "PUT", "/ff/resources/Note/\(guid)/data", body: Array(repeating: 7, count: 4096))
        #expect(upload.status == 200)
        #expect(try await server.client.send("GET", "/ff/resources/Note/\(guid)/data").status == 200)
        await server.stop()
        let path = server.dataDirectory + "/roost.sqlite"
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the WAL is left behind")
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        try? FileManager.default.removeItem(atPath: server.dataDirectory)
    }

    @Test(
        "20 start/stop cycles leave threads and descriptors where they were (measured alone)",
        .enabled(if: ProcessInfo.processInfo.environment[soloVariable] != nil))
    func cyclesMeasured() async throws {
        // The first cycle starts what lives for the whole process (Swift's and Dispatch's pools,
        // the shared hashing threads).
        try await Self.cycle()
        let before = processCounts()
        let namesBefore = threadNames()
        for _ in 0..<20 { try await Self.cycle() }
        let tolerance = 3
        let settled = await eventually(within: 5) {
            let now = processCounts()
            return now.threads <= before.threads + tolerance
                && now.descriptors <= before.descriptors + tolerance
        }
        let after = processCounts()
        #expect(
            settled,
            "threads \(before.threads) -> \(after.threads), descriptors \(before.descriptors) -> \(after.descriptors); threads before \(namesBefore), after \(threadNames())"
        )
    }

    @Test("20 start/stop cycles in one process leave no threads or descriptors behind")
    func cycles() async throws {
        guard ProcessInfo.processInfo.environment[soloVariable] == nil else { return }
        // Other tests run beside this one in this process, so the counting runs in a process of
        // its own: this test binary, asked for the measured test only.
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let result = try await runProgram(
            "/usr/bin/env",
            [
                "\(soloVariable)=1", testBinary, "--testing-library", "swift-testing", "--filter",
                "LifecycleTests/cyclesMeasured",
            ])
        #expect(result.status == 0, "\(result.output)\n\(result.errorOutput)")
        #expect(result.output.contains("passed") || result.errorOutput.contains("passed"))
        #expect(!(result.output + result.errorOutput).contains("Skipped"))
    }

    @Test("/metrics shows the size of the WAL, and shutdown removes it", .enabled(if: TestBackend.isSQLite))
    func walGauge() async throws {
        let server = try await makeOpenServer()
        #expect(
            try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"hi"}"#).status == 201)
        let metrics = try await server.client.send("GET", "/metrics").text
        let line = try #require(
            metrics.split(separator: "\n").first { $0.hasPrefix("roost_sqlite_wal_bytes ") })
        let bytes = try #require(Int(line.split(separator: " ")[1]))
        #expect(bytes > 0)
        #expect(metrics.contains("# TYPE roost_sqlite_wal_bytes gauge"))
        await server.stop()
        #expect(!FileManager.default.fileExists(atPath: server.dataDirectory + "/roost.sqlite-wal"))
    }
}
