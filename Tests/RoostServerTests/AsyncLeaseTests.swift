import Foundation
import RoostScripts
import RoostTestSupport
import Testing

/// Found by the audit of what several instances share: the ASYNC dispatch lease was 30 s and
/// renewed between runs only, so a run of a script timeout above about 10 s (a wait for a worker,
/// a worker's start, the run) could outlast it and another instance ran the same events again.
@Suite("ASYNC handlers' dispatch lease")
struct AsyncLeaseTests {
    @Test(
        "the lease is twice the longest run: queue wait, worker start and timeout",
        arguments: [
            (5.0, 80.0), (60, 300), (300, 1260),
        ])
    func leaseOutlastsTheLongestRun(timeout: Double, lease: Double) async throws {
        let server = try await TestServer { $0.scripts.timeout = timeout }
        #expect(server.application.asyncHandlers.options.lease == .milliseconds(Int64(lease * 1000)))
        await server.stop()
    }
}
