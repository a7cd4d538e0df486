import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 28, item 1: push tokens per user and device, received only while a session on the
/// device is live.
@Suite("Push devices: tokens per device, received only with a live session")
struct PushDeviceTests {
    static let apnsToken = String(repeating: "ab", count: 32)
    static let otherToken = String(repeating: "cd", count: 32)

    static func apns(_ token: String = apnsToken, environment: String = "sandbox") -> String {
        #"{"platform":"apns","token":"\#(token)","environment":"\#(environment)","bundleId":"com.example.whereuat"}"#
    }

    /// alice on her iPhone (registered there) and her iPad, bob on his phone.
    func world(policy: SessionPolicy = .perDevice, clock: ManualWallClock = ManualWallClock()) async throws
        -> (server: TestServer, tokens: [String: String])
    {
        let server = try await makeAccountServer(clock: clock, policy: policy)
        let alice = try await server.client.register("alice", extra: #","deviceId":"iphone""#)
        let bob = try await server.client.register("bob", extra: #","deviceId":"bobphone""#)
        var tokens = [
            "alice": try #require(alice.json["token"] as? String),
            "bob": try #require(bob.json["token"] as? String),
        ]
        if policy != .singleDevice {
            tokens["alice-ipad"] = try await server.client.login("alice", device: "ipad")
        }
        return (server, tokens)
    }

    @Test("a user registers, lists and unregisters her devices' tokens; a token moves with its device")
    func registerListUnregister() async throws {
        let (server, tokens) = try await world()
        let devices = "/ff/push/devices"
        try await server.run(
            [
                APIScenario(
                    name: "alice registers her iPhone", caller: "alice", method: "PUT",
                    path: "\(devices)/iphone",
                    body: Self.apns(), status: 200,
                    contains: [
                        #""deviceId":"iphone""#, #""platform":"apns""#, #""environment":"sandbox""#,
                        #""bundleId":"com.example.whereuat""#,
                    ], changes: []),
                APIScenario(
                    name: "her iPad with an FCM token", caller: "alice-ipad", method: "PUT",
                    path: "\(devices)/ipad",
                    body: #"{"platform":"fcm","token":"fcm:token-1","bundleId":"com.example.whereuat"}"#,
                    status: 200, contains: [#""platform":"fcm""#], excludes: ["environment"]),
                APIScenario(
                    name: "both listed, receiving", caller: "alice", method: "GET", path: devices,
                    status: 200,
                    contains: [#""deviceId":"ipad""#, #""deviceId":"iphone""#, #""receiving":true"#],
                    excludes: [#""receiving":false"#]),
                APIScenario(
                    name: "bob sees only his own (none)", caller: "bob", method: "GET", path: devices,
                    status: 200,
                    exactBody: #"{"items":[]}"#),
                APIScenario(
                    name: "bob may not list alice's", caller: "bob", method: "GET", path: "\(devices)?user=x",
                    status: 403, code: "admin_required"),
                APIScenario(
                    name: "bob cannot register on alice's device id", caller: "bob", method: "PUT",
                    path: "\(devices)/iphone", body: Self.apns(Self.otherToken), status: 404,
                    code: "device_not_found"),
                // The same token from bob's phone (the app reinstalled, the phone sold): it moves.
                APIScenario(
                    name: "the token moves to bob's phone", caller: "bob", method: "PUT",
                    path: "\(devices)/bobphone",
                    body: Self.apns(), status: 200),
                APIScenario(
                    name: "alice's iPhone lost it", caller: "alice", method: "GET", path: devices,
                    status: 200,
                    contains: [#""deviceId":"ipad""#], excludes: [#""deviceId":"iphone""#]),
                APIScenario(
                    name: "alice unregisters her iPad", caller: "alice", method: "DELETE",
                    path: "\(devices)/ipad",
                    status: 204),
                APIScenario(
                    name: "again: not found", caller: "alice", method: "DELETE", path: "\(devices)/ipad",
                    status: 404,
                    code: "device_not_found"),
                APIScenario(
                    name: "anonymous", method: "GET", path: devices, status: 401, code: "login_required"),
            ], tokens: tokens)
        await server.stop()
    }

    @Test("a device stops receiving when its session ends: logout, revocation, single-device login")
    func receivingFollowsTheSession() async throws {
        let (server, tokens) = try await world(policy: .singleDevice)
        try await server.run(
            [
                APIScenario(
                    name: "register the iPhone", caller: "alice", method: "PUT",
                    path: "/ff/push/devices/iphone",
                    body: Self.apns(), status: 200)
            ], tokens: tokens)
        // One active device (seed 003): logging in on the iPad ends the iPhone's session.
        let ipad = try await server.client.login("alice", device: "ipad")
        let ipadTokens = ["alice": ipad]
        try await server.run(
            [
                APIScenario(
                    name: "the iPhone no longer receives", caller: "alice", method: "GET",
                    path: "/ff/push/devices",
                    status: 200, contains: [#""deviceId":"iphone""#, #""receiving":false"#]),
                APIScenario(
                    name: "the iPad registers", caller: "alice", method: "PUT", path: "/ff/push/devices/ipad",
                    body: Self.apns(Self.otherToken), status: 200),
                APIScenario(
                    name: "only the iPad receives", caller: "alice", method: "GET", path: "/ff/push/devices",
                    status: 200,
                    contains: [#""deviceId":"ipad","platform":"apns","token":"\#(Self.otherToken)""#]),
            ], tokens: ipadTokens)
        let listed = try await server.client.send(
            "GET", "/ff/push/devices", headers: [("Authorization", "Bearer \(ipad)")])
        let receiving = (listed.json["items"] as? [[String: Any]] ?? []).map {
            "\($0["deviceId"] as? String ?? "?")=\($0["receiving"] as? Bool ?? false)"
        }
        #expect(receiving == ["iphone=false", "ipad=true"].sorted())
        // A logout ends the iPad's session too: nothing receives.
        #expect(
            try await server.client.send("POST", "/ff/logout", headers: [("Authorization", "Bearer \(ipad)")])
                .status
                < 300)
        let laptop = try await server.client.login("alice", device: "laptop")
        let afterLogout = try await server.client.send(
            "GET", "/ff/push/devices", headers: [("Authorization", "Bearer \(laptop)")])
        #expect(afterLogout.text.contains(#""deviceId":"ipad""#))
        #expect(!afterLogout.text.contains(#""receiving":true"#), "\(afterLogout.text)")
        await server.stop()
    }

    @Test("an expired session stops its device receiving")
    func expiryStopsReceiving() async throws {
        let clock = ManualWallClock()
        let (server, tokens) = try await world(clock: clock)
        try await server.run(
            [
                APIScenario(
                    name: "register", caller: "alice", method: "PUT", path: "/ff/push/devices/iphone",
                    body: Self.apns(), status: 200)
            ], tokens: tokens)
        clock.advance(seconds: 40 * 24 * 3600)
        let ipad = try await server.client.login("alice", device: "ipad")
        let listed = try await server.client.send(
            "GET", "/ff/push/devices", headers: [("Authorization", "Bearer \(ipad)")])
        #expect(listed.text.contains(#""receiving":false"#))
        #expect(!listed.text.contains(#""receiving":true"#))
        await server.stop()
    }

    static let badRegistrations: [(String, String, String)] = [
        ("{}", "missing_field", "platform"),
        (#"{"platform":"sms","token":"x","bundleId":"a"}"#, "invalid_field", "platform"),
        (
            #"{"platform":"apns","token":"xyz","environment":"sandbox","bundleId":"a"}"#, "invalid_field",
            "token"
        ),
        (
            #"{"platform":"apns","token":"\#(String(repeating: "a", count: 201))","environment":"sandbox","bundleId":"a"}"#,
            "invalid_field", "token"
        ),
        (#"{"platform":"apns","token":"\#(apnsToken)","bundleId":"a"}"#, "missing_field", "environment"),
        (
            #"{"platform":"apns","token":"\#(apnsToken)","environment":"dev","bundleId":"a"}"#,
            "invalid_field",
            "environment"
        ),
        (#"{"platform":"fcm","token":"a b","bundleId":"a"}"#, "invalid_field", "token"),
        (
            #"{"platform":"fcm","token":"\#(String(repeating: "t", count: 4097))","bundleId":"a"}"#,
            "invalid_field",
            "token"
        ),
        (
            #"{"platform":"fcm","token":"t","environment":"sandbox","bundleId":"a"}"#, "invalid_field",
            "environment"
        ),
        (#"{"platform":"fcm","token":"t"}"#, "missing_field", "bundleId"),
        (#"{"platform":"fcm","token":"t","bundleId":"a/b"}"#, "invalid_field", "bundleId"),
        (
            #"{"platform":"fcm","token":"t","bundleId":"\#(String(repeating: "b", count: 256))"}"#,
            "invalid_field",
            "bundleId"
        ),
    ]

    @Test("every malformed registration is a 400 naming its field, and nothing is stored")
    func badRegistration() async throws {
        let (server, tokens) = try await world()
        for (body, code, field) in Self.badRegistrations {
            let answer = try await APIScenario(
                name: "\(field): \(body.prefix(60))", caller: "alice", method: "PUT",
                path: "/ff/push/devices/iphone",
                body: body, status: 400, code: code
            ).run(against: server, tokens: tokens)
            #expect(
                (answer.json["details"] as? [String: Any])?["field"] as? String == field, "\(body.prefix(60))"
            )
        }
        try await server.run(
            [
                APIScenario(
                    name: "nothing stored", caller: "alice", method: "GET", path: "/ff/push/devices",
                    status: 200,
                    exactBody: #"{"items":[]}"#),
                APIScenario(
                    name: "a device id past 128 bytes", caller: "alice", method: "PUT",
                    path: "/ff/push/devices/\(String(repeating: "d", count: 129))", body: Self.apns(),
                    status: 400,
                    code: "invalid_parameter"),
                APIScenario(
                    name: "a huge body is refused at its head", caller: "alice", method: "PUT",
                    path: "/ff/push/devices/iphone", body: String(repeating: " ", count: 2 << 20) + "{}",
                    status: 413, code: "body_too_large"),
            ], tokens: tokens)
        await server.stop()
    }

    @Test("a user has at most 50 devices with push tokens")
    func deviceCap() async throws {
        let (server, _) = try await world(policy: .unlimited)
        var token = ""
        for index in 0...PushDevices.maximumDevicesPerUser {
            token = try await server.client.login("alice", device: "d\(index)")
            let answer = try await server.client.send(
                "PUT", "/ff/push/devices/d\(index)", json: Self.apns(String(format: "%064x", index)),
                headers: [("Authorization", "Bearer \(token)")])
            if index < PushDevices.maximumDevicesPerUser {
                #expect(answer.status == 200, "\(index): \(answer.text)")
            } else {
                #expect(answer.status == 409)
                #expect(answer.json["code"] as? String == "too_many_push_devices")
            }
        }
        // Registering again on a device that has a token already is no new device: it is allowed.
        let again = try await server.client.send(
            "PUT", "/ff/push/devices/d0", json: Self.apns(String(format: "%064x", 999)),
            headers: [("Authorization", "Bearer \(token)")])
        #expect(again.status == 200, "\(again.text)")
        await server.stop()
    }
}
