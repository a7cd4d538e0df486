import Foundation
import RoostCore
import RoostServer
import RoostTestSupport

/// A server with an administrator, cheap hashing, a manual clock and a scripted sender standing
/// in for APNs (nil: push not configured).
struct PushWorld {
    let server: TestServer
    let admin: String
    let clock: ManualWallClock
    let sender: ScriptedPushSender?

    static func make(
        sender: ScriptedPushSender? = ScriptedPushSender(), policy: SessionPolicy = .perDevice,
        dataDirectory: String? = nil, configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> PushWorld {
        let directory: String
        if let dataDirectory {
            directory = dataDirectory
        } else {
            directory = try await makeDataFolder()
            let made = try await runRoost(
                ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
            guard made.status == 0 else { throw TestClientError(description: made.errorOutput) }
        }
        let clock = ManualWallClock(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.clock = clock
            configuration.sessionPolicy = policy
            configuration.push.sender = sender
            configuration.push.dispatch.pollInterval = .milliseconds(50)
            configure(&configuration)
        }
        let admin = try await server.client.login("dave", password: "dave-password")
        return PushWorld(server: server, admin: admin, clock: clock, sender: sender)
    }

    var client: TestHTTPClient { server.client }

    /// Registers `name` and returns its guid.
    func user(_ name: String) async throws -> String {
        let registered = try await client.register(name)
        guard let user = registered.json["user"] as? [String: Any], let guid = user["guid"] as? String else {
            throw TestClientError(description: "register failed: \(registered.text)")
        }
        return guid
    }

    /// Puts a device's push token as the session `token`.
    func putDevice(
        _ deviceId: String, token pushToken: String, as token: String, platform: String = "apns",
        bundleId: String = "com.example.app", environment: String = "sandbox"
    ) async throws -> TestResponse {
        try await client.send(
            "PUT", "/ff/push/devices/\(deviceId)",
            json:
                #"{"platform":"\#(platform)","token":"\#(pushToken)","environment":"\#(environment)","bundleId":"\#(bundleId)"}"#,
            headers: [("X-Token", token)])
    }

    /// Sends a push as the administrator.
    func push(_ json: String) async throws -> TestResponse {
        try await client.send("POST", "/ff/push", json: json, headers: [("X-Token", admin)])
    }

    /// A push's deliveries by device id.
    func deliveries(_ id: String) async throws -> [String: [String: Any]] {
        let status = try await client.send("GET", "/ff/push/\(id)", headers: [("X-Token", admin)])
        var byDevice: [String: [String: Any]] = [:]
        for item in status.json["deliveries"] as? [[String: Any]] ?? [] {
            byDevice[item["deviceId"] as? String ?? ""] = item
        }
        return byDevice
    }

    /// Waits until `device`'s delivery has been tried `attempts` times and is waiting for a retry
    /// (not still "sending" its last attempt).
    func waitUntilPending(_ id: String, _ device: String, attempts: Int) async throws -> Bool {
        try await eventually {
            let delivery = try await deliveries(id)[device]
            return delivery?["attempts"] as? Int == attempts && delivery?["state"] as? String == "pending"
        }
    }

    /// Waits until every delivery of the push is finished.
    func finished(_ id: String) async throws -> [String: [String: Any]] {
        var last: [String: [String: Any]] = [:]
        _ = try await eventually {
            last = try await deliveries(id)
            return last.values.allSatisfy { !["pending", "sending"].contains($0["state"] as? String ?? "") }
        }
        return last
    }
}

/// A 64-digit hex APNs token made from `seed`.
func apnsToken(_ seed: Int) -> String {
    let hex = String(seed, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
}
