import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 28, item 2: the scripts' `ff.sendPushNotifications` and `ff.sendIOSPush`, as
/// hoodyoodoo's WouldYaCreate calls them, and `SET PushIsInactive true`.
@Suite("Push from scripts")
struct PushScriptTests {
    static let module = """
        var ff = require('ffef/FatFractal');
        exports.handleWouldYaCreate = function () {
            var wouldYa = ff.getEventHandlerData();
            var sent = ff.sendPushNotifications([wouldYa.target], 'Would ya? ' + wouldYa.text);
            var ios = ff.sendIOSPush(wouldYa.target, {aps: {alert: {title: 'T', body: 'B'}, badge: 2}, wid: wouldYa.guid});
            ff.createObjAtUrl({wouldYa: wouldYa.guid, sent: sent === null ? 0 : sent.devices,
                ios: ios === null ? 0 : ios.devices}, '/ff/resources/Done');
        };
        """

    static func world(inactive: Bool) async throws -> PushWorld {
        var definition = try AppDefinition.parse(
            Array(
                #"""
                {"settings": {"pushInactive": \#(inactive)},
                 "collections": {"WouldYa": {"rules": {"create": "loggedIn"}}, "Done": {"rules": {"create": "public"}}}}
                """#.utf8))
        definition.scripts.modules = ["scripts/WouldYaEventHandlers": module]
        definition.scripts.handlers = [
            ScriptHandler(
                name: "WouldYaCreate", collection: "WouldYa", events: [.create], phase: .post,
                entry: ScriptEntry(module: "scripts/WouldYaEventHandlers", function: "handleWouldYaCreate"),
                rights: .system)
        ]
        return try await PushWorld.make { $0.appDefinition = definition }
    }

    @Test("WouldYaCreate runs to its end and its two pushes reach the target's device")
    func handlerSends() async throws {
        let world = try await Self.world(inactive: false)
        let alice = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        let created = try await world.client.send(
            "POST", "/ff/resources/WouldYa", json: #"{"target":"\#(alice)","text":"dance"}"#,
            headers: [("X-Token", phone)])
        #expect(created.status == 201, "\(created.text)")
        let done = try await world.client.send("GET", "/ff/resources/Done")
        let item = try #require((done.json["items"] as? [[String: Any]])?.first)
        #expect(item["sent"] as? Int == 1 && item["ios"] as? Int == 1)
        let sender = try #require(world.sender)
        #expect(try await eventually { sender.sends.count == 2 })
        let bodies = Set(sender.sends.map { $0.notification.body ?? "" })
        #expect(bodies == ["Would ya? dance", "B"])
        let ios = try #require(sender.sends.first { $0.notification.body == "B" }?.notification)
        #expect(ios.title == "T" && ios.badge == 2)
        #expect(ios.data?.objectValue?["wid"]?.stringValue == created.json["guid"] as? String)
        await world.server.stop()
    }

    @Test("with pushInactive (SET PushIsInactive true) the calls are logged no-ops and the handler ends")
    func inactiveIsANoOp() async throws {
        let world = try await Self.world(inactive: true)
        let alice = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        let created = try await world.client.send(
            "POST", "/ff/resources/WouldYa", json: #"{"target":"\#(alice)","text":"dance"}"#,
            headers: [("X-Token", phone)])
        #expect(created.status == 201, "\(created.text)")
        let done = try await world.client.send("GET", "/ff/resources/Done")
        let item = try #require((done.json["items"] as? [[String: Any]])?.first)
        #expect(item["sent"] as? Int == 0 && item["ios"] as? Int == 0)
        let dispatcher = try #require(world.server.application.pushDispatcher)
        let rounds = dispatcher.completedRounds
        #expect(try await eventually { dispatcher.completedRounds >= rounds + 2 })
        #expect(world.sender?.sends.isEmpty == true)
        await world.server.stop()
    }
}
