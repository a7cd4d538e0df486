import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 19: ASYNC handlers run from the change log after the answer, and a server killed with
/// SIGKILL in the middle of one runs it again after its restart.
@Suite("Script handlers: ASYNC, from the durable outbox") struct ScriptAsyncHandlerTests {
    static let receipts = """
        var ff = require('ffef/FatFractal');
        exports.receipt = function () {
            var order = ff.getEventHandlerData();
            try { ff.createObjAtUrl({guid: 's-' + order.guid}, '/Started'); } catch (again) {}
            // An order that waits runs until the test says go: the server is killed before.
            while (order.wait && ff.getObjFromUrl('/ff/resources/Go/' + order.guid) === null) {
                var until = Date.now() + 50;
                while (Date.now() < until) {}
            }
            // Idempotent by the event: a run again after a crash makes no second receipt.
            if (ff.getObjFromUrl('/ff/resources/Receipt/r-' + order.guid) === null) {
                ff.createObjAtUrl({guid: 'r-' + order.guid, order: order.guid,
                                   event: ff.getActiveUser() ? 'seen' : 'none'}, '/Receipt');
            }
        };
        """

    func appFolder() throws -> String {
        let folder = TestServer.makeTemporaryDirectory() + "-app"
        try FileManager.default.createDirectory(
            atPath: folder + "/scripts", withIntermediateDirectories: true)
        try Data(Self.receipts.utf8).write(to: URL(fileURLWithPath: folder + "/scripts/Receipts.js"))
        try Data(
            #"""
            {"collections": {"*": {"rules": {"create": "public", "update": "public"}}},
             "handlers": {"Receipt": {"collection": "Order", "events": ["create"], "phase": "async",
                                      "script": "scripts/Receipts", "function": "receipt", "runAs": "system"}}}
            """#.utf8
        ).write(to: URL(fileURLWithPath: folder + "/roost.json"))
        return folder + "/roost.json"
    }

    @Test(
        "an ASYNC handler runs after the answer; killed with SIGKILL mid-run, it runs again after restart, once"
    )
    func survivesSIGKILL() async throws {
        let app = try appFolder()
        let data = TestServer.makeTemporaryDirectory()
        let first = try RoostProcess(
            dataDirectory: data, arguments: ["--app", app, "--script-timeout", "120"])
        let client = TestHTTPClient(port: first.port)
        // A quick one first: it runs after its answer, from the outbox.
        let quick = try await client.send("POST", "/ff/resources/Order", json: #"{"guid":"o1"}"#)
        #expect(quick.status == 201)
        #expect(
            await eventually { (try? await client.send("GET", "/ff/resources/Receipt/r-o1"))?.status == 200 })
        // A slow one: the server dies while its handler runs.
        let slow = try await client.send("POST", "/ff/resources/Order", json: #"{"guid":"o2","wait":true}"#)
        #expect(slow.status == 201)
        #expect(
            await eventually { (try? await client.send("GET", "/ff/resources/Started/s-o2"))?.status == 200 })
        try await first.stop(signal: SIGKILL)

        let second = try RoostProcess(
            dataDirectory: data,
            arguments: ["--app", app, "--script-timeout", "120", "--metrics-allow", "127.0.0.0/8,::1"])
        let again = TestHTTPClient(port: second.port)
        #expect(try await again.send("GET", "/ff/resources/Receipt/r-o2").status == 404)
        let go = try await again.send("POST", "/ff/resources/Go", json: #"{"guid":"o2"}"#)
        #expect(go.status == 201)
        // On PostgreSQL the killed instance's lease (30 s) lapses first; a data folder's is taken back at once.
        #expect(
            await eventually(within: TestBackend.isSQLite ? 30 : 75) {
                (try? await again.send("GET", "/ff/resources/Receipt/r-o2"))?.status == 200
            })
        let receipts = try await again.send("GET", "/ff/resources/Receipt")
        #expect(
            (receipts.json["items"] as? [[String: Any]])?.compactMap { $0["guid"] as? String }.sorted() == [
                "r-o1", "r-o2",
            ])
        // The first run of o1 is not repeated: the cursor had passed it. The run is counted once
        // the script has returned, a moment after its receipt is visible: wait for the count.
        var metrics = ""
        #expect(
            await eventually {
                metrics = (try? await again.send("GET", "/metrics"))?.text ?? ""
                return metrics.contains(#"roost_script_runs_total{script="Receipt"} "#)
            })
        #expect(metrics.contains(#"roost_script_runs_total{script="Receipt"} 1"#), "\(metrics)")
        let failed = try await runRoost(["events", "failed", "--data-dir", data])
        #expect(failed.status == 0)
        try await second.stop(signal: SIGTERM)
    }
}
