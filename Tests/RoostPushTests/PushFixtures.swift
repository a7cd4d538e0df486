import Foundation
import RoostCore
import RoostJSON
import RoostPush
import RoostTestSupport
import Testing

let fakesAvailable = FakePushProvider.python != nil
let bundleID = "org.roost.Tests"
let keyID = "KEY1234567"
let teamID = "TEAM123456"

/// A device token the fake answers as scripted (hex, as APNs tokens are).
func deviceToken(_ number: Int) -> String { String(repeating: String(format: "%02x", number), count: 32) }

func apnsTarget(_ token: String, _ environment: APNsEnvironment = .production) -> PushTarget {
    PushTarget(platform: .apns, token: token, environment: environment, bundleID: bundleID)
}

/// A fake APNs with its own CA and provider key, and an APNs sender pointed at it (both
/// environments) on a manual clock; both stopped after the body, whatever it does.
struct APNsFixture: Sendable {
    let fake: FakePushProvider
    let sender: APNsSender
    let clock: ManualWallClock
    let folder: String

    static func run(
        script: String = "{}", adjust: @Sendable (inout APNsConfiguration) -> Void = { _ in },
        _ body: (APNsFixture) async throws -> Void
    ) async throws {
        let authority = try await TestCertificateAuthority()
        let folder = authority.folder
        let gateway = try await FakeAPNs.start(
            authority: authority, script: script, keyID: keyID, teamID: teamID, topic: bundleID)
        let fake = gateway.fake
        try await fake.whileRunning {
            var configuration = APNsConfiguration(keyFile: gateway.keyFile, keyID: keyID, teamID: teamID)
            configuration.productionURL = "https://127.0.0.1:\(fake.port)"
            configuration.sandboxURL = "https://localhost:\(fake.port)"
            configuration.caFile = authority.certificate
            adjust(&configuration)
            let clock = ManualWallClock()
            let sender = try APNsSender(configuration: configuration, clock: clock)
            do {
                try await body(APNsFixture(fake: fake, sender: sender, clock: clock, folder: folder))
            } catch {
                await sender.shutdown()
                throw error
            }
            await sender.shutdown()
        }
    }

    var requests: [[String: Any]] { fake.events("request") }
}

/// A fake OAuth token endpoint and FCM, a service account whose key it knows, and an FCM sender.
struct FCMFixture: Sendable {
    let fake: FakePushProvider
    let sender: FCMSender
    let clock: ManualWallClock

    static let projectID = "roost-test"
    static let clientEmail = "push@roost-test.iam.gserviceaccount.com"

    static func run(script: String = "{}", _ body: (FCMFixture) async throws -> Void) async throws {
        let folder = TestServer.makeTemporaryDirectory()
        let key = try await FakePushProvider.makeKey("service-account", rsa: true, folder: folder)
        try Data(script.utf8).write(to: URL(fileURLWithPath: folder + "/script.json"))
        let fake = try await FakePushProvider.start(
            "fake_fcm.py",
            [
                "--public-key", key.publicKey, "--client-email", clientEmail, "--project-id", projectID,
                "--script", folder + "/script.json",
            ], folder: folder)
        try await fake.whileRunning {
            let account = JSONObject(uniqueMembers: [
                ("type", .string("service_account")), ("project_id", .string(projectID)),
                ("private_key", .string(try String(contentsOfFile: key.privateKey, encoding: .utf8))),
                ("client_email", .string(clientEmail)),
                ("token_uri", .string("http://127.0.0.1:\(fake.port)/token")),
            ])
            let accountFile = folder + "/service-account.json"
            try Data(JSONWriter.bytes(.object(account))).write(to: URL(fileURLWithPath: accountFile))
            var configuration = FCMConfiguration(serviceAccountFile: accountFile)
            configuration.baseURL = "http://127.0.0.1:\(fake.port)"
            let clock = ManualWallClock()
            let sender = try FCMSender(configuration: configuration, clock: clock)
            do {
                try await body(FCMFixture(fake: fake, sender: sender, clock: clock))
            } catch {
                await sender.shutdown()
                throw error
            }
            await sender.shutdown()
        }
    }
}

/// Sends `count` notifications at once; their outcomes in order.
func sendConcurrently(
    _ sender: some PushSender, _ count: Int, notification: PushNotification = PushNotification(title: "Hi"),
    target: @escaping @Sendable (Int) -> PushTarget
) async -> [PushOutcome] {
    await withTaskGroup(of: (Int, PushOutcome).self) { group in
        for index in 0..<count {
            group.addTask { (index, await sender.send(notification, to: target(index))) }
        }
        var outcomes = [PushOutcome?](repeating: nil, count: count)
        for await (index, outcome) in group { outcomes[index] = outcome }
        return outcomes.map { $0! }
    }
}

extension PushOutcome {
    var isDelivered: Bool {
        if case .delivered = self { return true }
        return false
    }
}
