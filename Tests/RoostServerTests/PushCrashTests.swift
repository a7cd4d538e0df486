import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 28, item 5: a dispatcher that dies mid-send loses no push. The crash image is the
/// database as a kill -9 leaves it: on SQLite the committed files copied while the first server
/// hangs in its sends (nothing is written then), on PostgreSQL the shared database, whose
/// lease the hung server stops renewing.
@Suite("Push crash safety")
struct PushCrashTests {
    @Test("deliveries in flight when the dispatcher died are sent again by the next one; queued ones too")
    func inFlightSurvivesACrash() async throws {
        let hung = ScriptedPushSender(holding: true)
        let first = try await PushWorld.make(sender: hung) { $0.push.dispatch.lease = .seconds(1) }
        let alice = try await first.user("alice")
        for (index, device) in ["phone", "tablet", "watch"].enumerated() {
            let token = try await first.client.login("alice", device: device)
            #expect(try await first.putDevice(device, token: apnsToken(index + 1), as: token).status == 200)
        }
        let inFlight = try await first.push(#"{"users":["\#(alice)"],"body":"in flight"}"#)
        #expect(inFlight.json["devices"] as? Int == 3)
        #expect(try await eventually { hung.sends.count == 3 })
        let queued = try await first.push(
            #"{"devices":[{"userGuid":"\#(alice)","deviceId":"phone"}],"body":"queued"}"#)
        #expect(queued.json["devices"] as? Int == 1)

        let image: String
        if TestBackend.isSQLite {
            image = TestServer.makeTemporaryDirectory()
            for file in ["roost.sqlite", "roost.sqlite-wal"] {
                try FileManager.default.copyItem(
                    atPath: first.server.dataDirectory + "/" + file, toPath: image + "/" + file)
            }
        } else {
            image = first.server.dataDirectory
        }
        let recorder = ScriptedPushSender()
        let second = try await PushWorld.make(sender: recorder, dataDirectory: image)
        for id in [inFlight.json["id"], queued.json["id"]] {
            let deliveries = try await second.finished(try #require(id as? String))
            #expect(deliveries.values.allSatisfy { $0["state"] as? String == "delivered" }, "\(deliveries)")
        }
        let resent = try await second.deliveries(try #require(inFlight.json["id"] as? String))
        #expect(resent.values.map { $0["attempts"] as? Int } == [2, 2, 2])
        #expect(recorder.tokens.sorted() == [apnsToken(1), apnsToken(1), apnsToken(2), apnsToken(3)])
        let metrics = try await second.client.send("GET", "/metrics")
        #expect(metrics.text.contains("roost_push_uncertain_total 3\n"))
        await second.server.stop()
        hung.release()
        await first.server.stop()
    }
}
