import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 28, item 1: devices' push tokens, one per user and device, one row per token.
@Suite("Push devices")
struct PushDeviceTests {
    @Test("a user registers a token for a device of their own sessions, and only for one")
    func registerOwnDevice() async throws {
        let world = try await PushWorld.make()
        _ = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        let put = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        #expect(put.status == 200)
        #expect(put.json["deviceId"] as? String == "phone")
        #expect(put.json["platform"] as? String == "apns")
        #expect(put.json["environment"] as? String == "sandbox")
        #expect(put.json["bundleId"] as? String == "com.example.app")
        #expect(put.json["tokenSuffix"] as? String == "00000001")
        #expect(put.json["token"] == nil)
        // A device id no session of the caller's carries, whoever's it is: the same 404.
        _ = try await world.user("bob")
        _ = try await world.client.login("bob", device: "bobs-phone")
        for other in ["bobs-phone", "nowhere"] {
            let refused = try await world.putDevice(other, token: apnsToken(2), as: phone)
            #expect(refused.status == 404)
            #expect(refused.json["code"] as? String == "device_not_found")
        }
        let unnamed = try await world.putDevice("default", token: apnsToken(2), as: phone)
        #expect(unnamed.status == 400)
        #expect(unnamed.json["code"] as? String == "invalid_parameter")
        let anonymous = try await world.client.send(
            "PUT", "/ff/push/devices/phone",
            json: #"{"platform":"apns","token":"\#(apnsToken(3))","bundleId":"x"}"#)
        #expect(anonymous.status == 401)
        await world.server.stop()
    }

    @Test("tokens, platforms, environments and bundle ids are checked with numbers")
    func hostileDeviceInputs() async throws {
        let world = try await PushWorld.make()
        _ = try await world.user("alice")
        let phone = try await world.client.login("alice", device: "phone")
        let cases: [(String, String, String)] = [
            (
                #"{"platform":"apns","token":"\#(String(repeating: "g", count: 64))","bundleId":"a"}"#,
                "invalid_push_token", "not hex"
            ),
            (
                #"{"platform":"apns","token":"\#(String(repeating: "a", count: 63))","bundleId":"a"}"#,
                "invalid_push_token", "short"
            ),
            (
                #"{"platform":"apns","token":"\#(String(repeating: "a", count: 201))","bundleId":"a"}"#,
                "invalid_push_token", "long"
            ),
            (#"{"platform":"fcm","token":"has space","bundleId":"a"}"#, "invalid_push_token", "fcm space"),
            (
                #"{"platform":"fcm","token":"\#(String(repeating: "x", count: 4097))","bundleId":"a"}"#,
                "invalid_push_token", "fcm long"
            ),
            (#"{"platform":"wns","token":"abc","bundleId":"a"}"#, "invalid_field", "platform"),
            (
                #"{"platform":"apns","token":"\#(apnsToken(1))","environment":"staging","bundleId":"a"}"#,
                "invalid_field", "environment"
            ),
            (
                #"{"platform":"apns","token":"\#(apnsToken(1))","bundleId":"\#(String(repeating: "b", count: 256))"}"#,
                "invalid_field", "bundle long"
            ),
            (#"{"platform":"apns","token":"\#(apnsToken(1))"}"#, "missing_field", "no bundle"),
            (#"{"platform":"apns","bundleId":"a"}"#, "missing_field", "no token"),
        ]
        for (body, code, name) in cases {
            let answer = try await world.client.send(
                "PUT", "/ff/push/devices/phone", json: body, headers: [("X-Token", phone)])
            #expect(answer.status == 400, "\(name)")
            #expect(answer.json["code"] as? String == code, "\(name): \(answer.text)")
        }
        let fcm = try await world.putDevice(
            "phone", token: String(repeating: "x", count: 4096), as: phone, platform: "fcm")
        #expect(fcm.status == 200)
        #expect(fcm.json["environment"] is NSNull)
        await world.server.stop()
    }

    @Test("a user registers at most 50 devices: the 51st is a 409 too_many_push_devices")
    func deviceCap() async throws {
        let world = try await PushWorld.make()
        _ = try await world.user("alice")
        for index in 0..<PushService.maximumDevicesPerUser {
            let token = try await world.client.login("alice", device: "d\(index)")
            #expect(try await world.putDevice("d\(index)", token: apnsToken(index), as: token).status == 200)
        }
        let last = try await world.client.login("alice", device: "extra")
        let refused = try await world.putDevice("extra", token: apnsToken(999), as: last)
        #expect(refused.status == 409)
        #expect(refused.json["code"] as? String == "too_many_push_devices")
        #expect((refused.json["details"] as? [String: Any])?["limit"] as? Int == 50)
        // Replacing a registered device's token is no new device.
        let again = try await world.client.login("alice", device: "d0")
        #expect(try await world.putDevice("d0", token: apnsToken(1000), as: again).status == 200)
        await world.server.stop()
    }

    @Test("a token moves with its device: registered by another device or user, it leaves the old one")
    func tokenMoves() async throws {
        let world = try await PushWorld.make()
        let alice = try await world.user("alice")
        let bob = try await world.user("bob")
        let alicePhone = try await world.client.login("alice", device: "phone")
        let bobPhone = try await world.client.login("bob", device: "phone")
        #expect(try await world.putDevice("phone", token: apnsToken(7), as: alicePhone).status == 200)
        #expect(try await world.putDevice("phone", token: apnsToken(7), as: bobPhone).status == 200)
        let all = try await world.client.send("GET", "/ff/push/devices", headers: [("X-Token", world.admin)])
        let items = all.json["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1)
        #expect(items.first?["userGuid"] as? String == bob)
        let own = try await world.client.send("GET", "/ff/push/devices", headers: [("X-Token", alicePhone)])
        #expect((own.json["items"] as? [[String: Any]])?.isEmpty == true)
        _ = alice
        await world.server.stop()
    }

    @Test("users list and delete their own devices; administrators anyone's, paged by cursor")
    func listAndDelete() async throws {
        let world = try await PushWorld.make()
        let alice = try await world.user("alice")
        let bob = try await world.user("bob")
        let phone = try await world.client.login("alice", device: "phone")
        let tablet = try await world.client.login("alice", device: "tablet")
        let bobPhone = try await world.client.login("bob", device: "phone")
        _ = try await world.putDevice("phone", token: apnsToken(1), as: phone)
        _ = try await world.putDevice("tablet", token: apnsToken(2), as: tablet)
        _ = try await world.putDevice("phone", token: apnsToken(3), as: bobPhone)
        let own = try await world.client.send("GET", "/ff/push/devices", headers: [("X-Token", phone)])
        #expect(
            (own.json["items"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == ["phone", "tablet"])
        #expect(own.json["next"] is NSNull)
        let others = try await world.client.send(
            "GET", "/ff/push/devices?user=\(bob)", headers: [("X-Token", phone)])
        #expect(others.status == 403)
        #expect(others.json["code"] as? String == "admin_required")
        let first = try await world.client.send(
            "GET", "/ff/push/devices?user=\(alice)&count=1", headers: [("X-Token", world.admin)])
        #expect((first.json["items"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == ["phone"])
        let next = try #require(first.json["next"] as? String)
        let second = try await world.client.send(
            "GET", "/ff/push/devices?user=\(alice)&count=1&after=\(next)", headers: [("X-Token", world.admin)]
        )
        #expect((second.json["items"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == ["tablet"])
        let everyone = try await world.client.send(
            "GET", "/ff/push/devices", headers: [("X-Token", world.admin)])
        #expect((everyone.json["items"] as? [[String: Any]])?.count == 3)
        let badCount = try await world.client.send(
            "GET", "/ff/push/devices?count=0", headers: [("X-Token", phone)])
        #expect(badCount.status == 400)
        // Bob cannot delete Alice's; Alice can, once.
        let notBobs = try await world.client.send(
            "DELETE", "/ff/push/devices/tablet?user=\(alice)", headers: [("X-Token", bobPhone)])
        #expect(notBobs.status == 403)
        #expect(
            try await world.client.send("DELETE", "/ff/push/devices/tablet", headers: [("X-Token", tablet)])
                .status
                == 204)
        let gone = try await world.client.send(
            "DELETE", "/ff/push/devices/tablet", headers: [("X-Token", tablet)])
        #expect(gone.status == 404)
        #expect(gone.json["code"] as? String == "device_not_found")
        #expect(
            try await world.client.send(
                "DELETE", "/ff/push/devices/phone?user=\(bob)", headers: [("X-Token", world.admin)]
            ).status == 204)
        await world.server.stop()
    }
}
