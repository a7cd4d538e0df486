import Foundation
import RoostTestSupport
import Testing

@Suite("Realtime events against the real binary")
struct EventProcessTests {
    func kilobytes(_ field: String, of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestClientError(description: "no \(field) in /proc/\(pid)/status") }
        return value
    }

    @Test(
        "eight clients that do not read, offered 160 MiB of events, raise resident memory by under 32 MiB and are cut off"
    )
    func slowReadersKeepMemoryBounded() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: [
                "--app", try writeOpenDefinition(beside: directory), "--events-buffer", "64KiB",
                "--events-slow-reader-timeout", "1",
                // The readers read only after the 400 writes, which under the whole suite's load
                // took over 60 s: past the default write timeout the connection is closed with the
                // farewell still queued behind the unread bytes.
                "--write-timeout", "900",
            ])
        let client = TestHTTPClient(port: server.port)
        let pid = server.process.pid
        // One write first, so one-time set-up (threads, arenas, caches) is not counted.
        _ = try await client.send("POST", "/ff/resources/Post", json: #"{"warm":true}"#)
        // Reset the peak (startup's Argon2id decoy hash alone peaks at 19 MiB), then measure from here.
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let before = try kilobytes("VmRSS", of: pid)
        var readers: [EventStreamReader] = []
        for _ in 0..<8 {
            let reader = try await EventStreamReader(port: server.port, path: "/ff/events?collection=Post")
            #expect(try await reader.waitForComment(containing: "subscribed"))
            readers.append(reader)
        }
        let text = String(repeating: "x", count: 50_000)
        for _ in 0..<400 {
            let created = try await client.send("POST", "/ff/resources/Post", json: #"{"text":"\#(text)"}"#)
            #expect(created.status == 201)
        }
        for reader in readers {
            let received = try await reader.readToEnd()
            #expect(received.count < 400)
            #expect(reader.comments.contains { $0.contains("last delivered id \(received.last?.id ?? "")") })
        }
        let peak = try kilobytes("VmHWM", of: pid)
        #expect(peak - before < 32 * 1024, "peak \(peak) KiB, before \(before) KiB")
        try await server.stop(signal: SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
