import Foundation
import RoostCore
import RoostJSON
import RoostServer
import RoostTestSupport
import Testing

/// Issue 28, item 2: `POST /ff/push`, the outbox and its dispatcher, through a scripted sender
/// standing in for APNs.
@Suite("Push sending")
struct PushSendTests {
    @Test("only administrators send; without a provider the answer is 503 push_not_configured")
    func whoSendsAndWhen() async throws {
        let unconfigured = try await PushWorld.make(sender: nil)
        let alice = try await unconfigured.user("alice")
        let aliceToken = try await unconfigured.client.login("alice", device: "phone")
        let body = #"{"users":["\#(alice)"],"title":"Hi"}"#
        let notAdmin = try await unconfigured.client.send(
            "POST", "/ff/push", json: body, headers: [("X-Token", aliceToken)])
        #expect(notAdmin.status == 403)
        #expect(notAdmin.json["code"] as? String == "admin_required")
        let off = try await unconfigured.push(body)
        #expect(off.status == 503)
        #expect(off.json["code"] as? String == "push_not_configured")
        // Devices register anyway, so apps need not know.
        #expect(try await unconfigured.putDevice("phone", token: apnsToken(1), as: aliceToken).status == 200)
        await unconfigured.server.stop()
    }

    @Test("a push to a user reaches each live device once, with the notification's fields")
    func delivers() async throws {
        let world = try await PushWorld.make()
        let alice = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        let tablet = try await world.client.login("alice", device: "tablet")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        _ = try await world.putDevice("tablet", token: apnsToken(2), as: tablet, environment: "production")
        let sent = try await world.push(
            #"{"users":["\#(alice)","\#(alice)"],"title":"Hello","subtitle":"S","body":"B","badge":3,"sound":"ping.caf","data":{"k":[1,2]},"collapseId":"c1","threadId":"t1","priority":"normal","expiration":60,"contentAvailable":true}"#
        )
        #expect(sent.status == 202)
        #expect(sent.json["devices"] as? Int == 2)
        let id = try #require(sent.json["id"] as? String)
        #expect(sent.header("Location") == "/ff/push/\(id)")
        let deliveries = try await world.finished(id)
        #expect(deliveries["phone"]?["state"] as? String == "delivered")
        #expect(deliveries["tablet"]?["state"] as? String == "delivered")
        let sender = try #require(world.sender)
        #expect(Set(sender.tokens) == [apnsToken(1), apnsToken(2)])
        #expect(sender.tokens.count == 2)
        let notification = try #require(sender.sends.first?.notification)
        #expect(
            notification
                == PushNotification(
                    title: "Hello", subtitle: "S", body: "B", badge: 3, sound: "ping.caf",
                    data: .object(JSONObjectLiteral.kArray), collapseID: "c1", threadID: "t1",
                    priority: .normal,
                    expiresAt: world.clock.nowMilliseconds() + 60_000, contentAvailable: true))
        let environments = Set(sender.sends.map { $0.target.environment })
        #expect(environments == [.sandbox, .production])
        #expect(
            sender.sends.allSatisfy { $0.target.bundleID == "com.example.app" && $0.target.platform == .apns }
        )
        let metrics = try await world.client.send("GET", "/metrics")
        #expect(metrics.text.contains("roost_push_sent_total 2\n"))
        #expect(metrics.text.contains("roost_push_queue_depth 0\n"))
        await world.server.stop()
    }

    @Test("single-device policy: after a login on device B, a push reaches only B")
    func singleDevicePolicy() async throws {
        let world = try await PushWorld.make(policy: .singleDevice)
        let alice = try await world.user("alice")
        let a = try await world.client.login("alice", device: "A")
        #expect(try await world.putDevice("A", token: apnsToken(0xA), as: a).status == 200)
        let b = try await world.client.login("alice", device: "B")
        #expect(try await world.putDevice("B", token: apnsToken(0xB), as: b).status == 200)
        let sent = try await world.push(#"{"users":["\#(alice)"],"body":"only B"}"#)
        #expect(sent.json["devices"] as? Int == 1)
        let id = try #require(sent.json["id"] as? String)
        let deliveries = try await world.finished(id)
        #expect(Array(deliveries.keys) == ["B"])
        #expect(world.sender?.tokens == [apnsToken(0xB)])
        await world.server.stop()
    }

    @Test("a revoked device receives nothing, whether revoked before the push or before its send")
    func revokedReceivesNothing() async throws {
        let sender = ScriptedPushSender(holding: true)
        let world = try await PushWorld.make(sender: sender)
        let alice = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        let tablet = try await world.client.login("alice", device: "tablet")
        let laptop = try await world.client.login("alice", device: "laptop")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        _ = try await world.putDevice("tablet", token: apnsToken(2), as: tablet)
        _ = try await world.putDevice("laptop", token: apnsToken(3), as: laptop)
        let loggedOut = try await world.client.send("POST", "/ff/logout", headers: [("X-Token", tablet)])
        #expect(loggedOut.json["loggedOut"] as? Bool == true)
        // The phone's first push holds the dispatcher; the laptop's session ends meanwhile.
        let first = try await world.push(
            #"{"devices":[{"userGuid":"\#(alice)","deviceId":"phone"}],"body":"1"}"#)
        #expect(first.json["devices"] as? Int == 1)
        #expect(try await eventually { sender.sends.count == 1 })
        let second = try await world.push(#"{"users":["\#(alice)"],"body":"2"}"#)
        #expect(second.json["devices"] as? Int == 2)
        let sessions = try await world.client.send("GET", "/ff/tokens", headers: [("X-Token", laptop)])
        let laptopSession = try #require(
            (sessions.json["items"] as? [[String: Any]])?.first { $0["deviceId"] as? String == "laptop" }?[
                "id"]
                as? String)
        #expect(
            try await world.client.send(
                "DELETE", "/ff/tokens/\(laptopSession)", headers: [("X-Token", laptop)]
            ).status
                == 204)
        sender.release()
        let deliveries = try await world.finished(try #require(second.json["id"] as? String))
        #expect(deliveries["phone"]?["state"] as? String == "delivered")
        #expect(deliveries["laptop"]?["state"] as? String == "skipped")
        #expect(deliveries["tablet"] == nil)
        #expect(!sender.tokens.contains(apnsToken(2)) && !sender.tokens.contains(apnsToken(3)))
        await world.server.stop()
    }

    @Test("an invalid token deletes exactly that device; other outcomes keep theirs")
    func invalidTokenDeletesThatDevice() async throws {
        let sender = ScriptedPushSender { target, _ in
            switch target.token {
            case apnsToken(1): .invalidToken(reason: "Unregistered")
            case apnsToken(2): .rejected(reason: "PayloadTooLarge")
            default: .delivered(providerID: "apns-id-1")
            }
        }
        let world = try await PushWorld.make(sender: sender)
        let alice = try await world.user("alice")
        for (index, device) in ["dead", "refused", "fine"].enumerated() {
            let token = try await world.client.login("alice", device: device)
            #expect(try await world.putDevice(device, token: apnsToken(index + 1), as: token).status == 200)
        }
        let sent = try await world.push(#"{"users":["\#(alice)"],"body":"x"}"#)
        let deliveries = try await world.finished(try #require(sent.json["id"] as? String))
        #expect(deliveries["dead"]?["state"] as? String == "invalid")
        #expect(deliveries["dead"]?["error"] as? String == "Unregistered")
        #expect(deliveries["refused"]?["state"] as? String == "rejected")
        #expect(deliveries["fine"]?["state"] as? String == "delivered")
        #expect(deliveries["fine"]?["providerId"] as? String == "apns-id-1")
        let devices = try await world.client.send(
            "GET", "/ff/push/devices?user=\(alice)", headers: [("X-Token", world.admin)])
        #expect(
            (devices.json["items"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == [
                "fine", "refused",
            ])
        let metrics = try await world.client.send("GET", "/metrics")
        #expect(metrics.text.contains("roost_push_invalidated_total 1\n"))
        #expect(metrics.text.contains("roost_push_failed_total 1\n"))
        await world.server.stop()
    }

    @Test("Retry-After is honoured on the injected clock; the bound gives a delivery up")
    func retryAfterAndGivingUp() async throws {
        let sender = ScriptedPushSender { target, earlier in
            if target.token == apnsToken(9) { return .retry(after: nil, reason: "503 Service Unavailable") }
            return earlier == 0
                ? .retry(after: .seconds(120), reason: "429 TooManyRequests") : .delivered(providerID: nil)
        }
        let world = try await PushWorld.make(sender: sender) { configuration in
            configuration.push.dispatch.attempts = 3
            configuration.push.dispatch.firstRetryDelay = .seconds(1)
        }
        let alice = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        let sent = try await world.push(#"{"users":["\#(alice)"],"body":"later"}"#)
        let id = try #require(sent.json["id"] as? String)
        // A claim counts the attempt while the delivery is "sending": wait for its result too, so
        // the clock moves only after the retry time was computed from it.
        #expect(try await world.waitUntilPending(id, "phone", attempts: 1))
        let dispatcher = try #require(world.server.application.pushDispatcher)
        world.clock.advance(seconds: 119)
        let rounds = dispatcher.completedRounds
        #expect(try await eventually { dispatcher.completedRounds >= rounds + 2 })
        #expect(sender.sends.count == 1)
        world.clock.advance(seconds: 1)
        let deliveries = try await world.finished(id)
        #expect(deliveries["phone"]?["state"] as? String == "delivered")
        #expect(deliveries["phone"]?["attempts"] as? Int == 2)
        #expect(sender.sends.count == 2)

        // Always 503: back-off 1 s, then 2 s, then given up after 3 sends.
        let tablet = try await world.client.login("alice", device: "tablet")
        _ = try await world.putDevice("tablet", token: apnsToken(9), as: tablet)
        let doomed = try await world.push(
            #"{"devices":[{"userGuid":"\#(alice)","deviceId":"tablet"}],"body":"x"}"#)
        let doomedID = try #require(doomed.json["id"] as? String)
        for attempts in 1...2 {
            #expect(try await world.waitUntilPending(doomedID, "tablet", attempts: attempts))
            world.clock.advance(seconds: Int64(1 << (attempts - 1)))
        }
        let given = try await world.finished(doomedID)
        #expect(given["tablet"]?["state"] as? String == "failed")
        #expect(given["tablet"]?["attempts"] as? Int == 3)
        #expect(given["tablet"]?["error"] as? String == "503 Service Unavailable")
        #expect(sender.tokens.filter { $0 == apnsToken(9) }.count == 3)
        await world.server.stop()
    }

    @Test("hostile pushes: too many users, huge data, no audience, bad fields get their errors")
    func hostilePushes() async throws {
        let world = try await PushWorld.make()
        let alice = try await world.user("alice")
        let tenThousand = (0..<10_000).map { #""u\#($0)""# }.joined(separator: ",")
        let thousandOne = (0...1000).map { #""u\#($0)""# }.joined(separator: ",")
        let huge = String(repeating: "x", count: 5000)
        let cases: [(String, Int, String)] = [
            (#"{"users":[\#(tenThousand)],"body":"x"}"#, 400, "too_many_push_targets"),
            (#"{"users":[\#(thousandOne)],"body":"x"}"#, 400, "too_many_push_targets"),
            (#"{"users":["\#(alice)"],"data":{"blob":"\#(huge)"}}"#, 413, "push_too_large"),
            (
                #"{"users":["\#(alice)"],"body":"\#(String(repeating: "b", count: 2049))"}"#, 400,
                "invalid_field"
            ),
            (#"{"body":"x"}"#, 400, "invalid_body"),
            (#"{"users":["\#(alice)"],"query":"guid eq 'x'","body":"x"}"#, 400, "invalid_body"),
            (#"{"users":[],"body":"x"}"#, 400, "invalid_field"),
            (#"{"users":["not a guid!"],"body":"x"}"#, 400, "invalid_field"),
            (#"{"users":["\#(alice)"]}"#, 400, "invalid_body"),
            (#"{"users":["\#(alice)"],"badge":-1}"#, 400, "invalid_field"),
            (#"{"users":["\#(alice)"],"body":"x","priority":"urgent"}"#, 400, "invalid_field"),
            (
                #"{"users":["\#(alice)"],"body":"x","collapseId":"\#(String(repeating: "c", count: 65))"}"#,
                400, "invalid_field"
            ),
            (#"{"users":["\#(alice)"],"body":"x","expiration":99999999}"#, 400, "invalid_field"),
            (#"{"users":["\#(alice)"],"data":[1]}"#, 400, "invalid_field"),
            (#"{"query":"guid eq","body":"x"}"#, 400, "invalid_query"),
        ]
        for (body, status, code) in cases {
            let answer = try await world.push(body)
            #expect(answer.status == status, "\(body.prefix(80))")
            #expect(answer.json["code"] as? String == code, "\(body.prefix(80)): \(answer.text.prefix(200))")
        }
        // A query on FFUser picks the users.
        let phone = try await world.client.login("alice", device: "phone")
        _ = try await world.putDevice("phone", token: apnsToken(5), as: phone)
        let byQuery = try await world.push(#"{"query":"userName eq 'alice'","body":"hi"}"#)
        #expect(byQuery.status == 202)
        #expect(byQuery.json["devices"] as? Int == 1)
        await world.server.stop()
    }
}

/// `{"k": [1, 2]}` as the parser builds it.
enum JSONObjectLiteral {
    static var kArray: JSONObject {
        var object = JSONObject()
        object["k"] = .array([.number("1"), .number("2")])
        return object
    }
}
