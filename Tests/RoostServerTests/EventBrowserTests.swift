import Foundation
import RoostTestSupport
import Testing

/// A browser's own `EventSource` on `GET /ff/events`, across a restart of the real server
/// (issue 16): it reopens by itself with `Last-Event-ID` and misses nothing written meanwhile.
@Suite("Realtime events in a browser") struct EventBrowserTests {
    @Test func headlessChromiumsEventSourceHearsEveryCreateAcrossARestart() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/browser/events_flow.py").path
        let site = TestServer.makeTemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: root.appendingPathComponent("Tests/browser/events/index.html").path,
            toPath: site + "/index.html")
        let venvPython = root.appendingPathComponent(".build/browser-venv/bin/python3").path
        let python =
            FileManager.default.isExecutableFile(atPath: venvPython)
            ? [venvPython] : ["/usr/bin/env", "python3"]
        let result = try await runProgram(
            python[0],
            Array(python.dropFirst()) + [
                script, "--roost", try RoostProcess.binaryPath(), "--site", site,
                "--data", TestServer.makeTemporaryDirectory(),
            ])
        if result.status == 3 {
            print(
                "skipping the browser test: \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        #expect(result.status == 0, "\(result.errorOutput)")
        let out = try #require(
            JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)"
        )
        let created = try #require(out["created"] as? [String])
        let received = try #require(out["received"] as? [[String: Any]])
        #expect(created.count == 5)
        #expect(received.compactMap { $0["guid"] as? String } == created, "every create once, in order")
        let ids = received.compactMap { ($0["id"] as? String).flatMap { Int64($0) } }
        #expect(ids.count == 5 && ids == ids.sorted() && Set(ids).count == 5)
        #expect((out["opens"] as? Int ?? 0) >= 2, "the stream reopened after the restart")
    }
}
