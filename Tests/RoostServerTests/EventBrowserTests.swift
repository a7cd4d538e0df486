import Foundation
import RoostTestSupport
import Testing

/// A browser's own `EventSource` on `GET /ff/events`, across a restart of the real server
/// (issue 16): it reopens by itself with `Last-Event-ID` and misses nothing written meanwhile.
@Suite("Realtime events in a browser") struct EventBrowserTests {
    @Test func headlessChromiumsEventSourceHearsEveryCreateAcrossARestart() async throws {
        let site = TestServer.makeTemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: BrowserScript.path("Tests/browser/events/index.html"), toPath: site + "/index.html")
        guard
            let out = try await BrowserScript.run(
                "events_flow.py",
                [
                    "--roost", try RoostProcess.binaryPath(), "--site", site,
                    "--data", TestServer.makeTemporaryDirectory(),
                ])
        else { return }
        let created = try #require(out["created"] as? [String])
        let received = try #require(out["received"] as? [[String: Any]])
        #expect(created.count == 5)
        #expect(received.compactMap { $0["guid"] as? String } == created, "every create once, in order")
        let ids = received.compactMap { ($0["id"] as? String).flatMap { Int64($0) } }
        #expect(ids.count == 5 && ids == ids.sorted() && Set(ids).count == 5)
        #expect((out["opens"] as? Int ?? 0) >= 2, "the stream reopened after the restart")
    }
}
