import Foundation
import RoostCore
import RoostSQLite
import RoostTestSupport
import Testing

/// Found by the audit of what several instances share: the push and mail dispatchers claimed
/// their lease once per round, so a round slower than the lease (a slow provider) let another
/// instance take over and resend what was still in flight. Sends now renew it as they go.
@Suite("Push dispatch under its lease", .enabled(if: TestBackend.isSQLite, "reads the lease row with SQLite"))
struct PushLeaseTests {
    /// Three devices of one user and a held sender, one send at a time.
    func world(_ sender: ScriptedPushSender) async throws -> (PushWorld, String) {
        let world = try await PushWorld.make(sender: sender) { $0.push.dispatch.concurrency = 1 }
        let alice = try await world.user("alice")
        for (number, device) in ["phone", "tablet", "laptop"].enumerated() {
            let token = try await world.client.login("alice", device: device)
            _ = try await world.putDevice(device, token: apnsToken(number + 1), as: token)
        }
        let pushed = try await world.push(#"{"users":["\#(alice)"],"body":"hello"}"#)
        #expect(pushed.json["devices"] as? Int == 3)
        return (world, try #require(pushed.json["id"] as? String))
    }

    func lease(_ world: PushWorld) throws -> (holder: String, until: Int64) {
        let connection = try SQLiteConnection(path: world.server.dataDirectory + "/roost.sqlite")
        defer { connection.close() }
        return try #require(
            try connection.first("SELECT holder, lease_until FROM push_dispatch WHERE id = 1") {
                ($0.text(0) ?? "", $0.integer(1))
            })
    }

    @Test("a round that outlasts a third of the lease claims it again before its next send")
    func renewsAsItSends() async throws {
        let sender = ScriptedPushSender(holding: true)
        let (world, id) = try await world(sender)
        #expect(try await eventually { sender.sends.count == 1 })
        let before = try lease(world)
        world.clock.advance(seconds: 11)
        sender.release()
        let finished = try await world.finished(id)
        #expect(finished.values.map { $0["state"] as? String } == ["delivered", "delivered", "delivered"])
        let after = try lease(world)
        #expect(after.holder == before.holder)
        #expect(after.until > before.until, "the lease was claimed again during the round")
    }

    @Test("once another instance holds the lease, no more sends start; the rest stay for it")
    func stopsOnceTheLeaseIsLost() async throws {
        let sender = ScriptedPushSender(holding: true)
        let (world, id) = try await world(sender)
        #expect(try await eventually { sender.sends.count == 1 })
        // Another instance takes the lease over (as when this one's lapsed).
        let connection = try SQLiteConnection(path: world.server.dataDirectory + "/roost.sqlite")
        try connection.execute(
            "UPDATE push_dispatch SET holder = 'other', lease_until = 9000000000000000 WHERE id = 1")
        connection.close()
        world.clock.advance(seconds: 11)
        let dispatcher = try #require(world.server.application.pushDispatcher)
        let rounds = dispatcher.completedRounds
        sender.release()
        #expect(try await eventually { dispatcher.completedRounds >= rounds + 2 })
        #expect(sender.sends.count == 1, "no send started without the lease")
        let states = try await world.deliveries(id).values.compactMap { $0["state"] as? String }.sorted()
        #expect(states == ["delivered", "sending", "sending"])
    }
}
