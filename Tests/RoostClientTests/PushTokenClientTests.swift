import Foundation
import RoostClient
import RoostTestSupport
import Testing

@Suite struct PushTokenClientTests {
    @Test func theSDKRegistersThisDevicesTokenAndItStopsReceivingAtLogout() async throws {
        let server = try await makeServer()
        let phone = try makeClient(port: server.port) { $0.deviceId = "alices-phone" }
        try await phone.register(userName: "alice", password: "correct horse", email: "alice@example.com")
        let token = Data((0..<32).map { UInt8($0) })
        let device = try await phone.registerPushToken(
            token, environment: .sandbox, bundleID: "com.example.app")
        #expect(device.deviceId == "alices-phone")
        #expect(device.tokenSuffix == "1c1d1e1f")
        #expect(device.environment == .sandbox)

        let tablet = try makeClient(port: server.port) { $0.deviceId = "alices-tablet" }
        try await tablet.login(userName: "alice", password: "correct horse")
        try await tablet.registerPushToken(
            "fcm-registration-token", platform: .fcm, bundleID: "com.example.app")
        #expect(
            try await tablet.pushDevices().map { "\($0.deviceId) \($0.receiving == true)" }.sorted() == [
                "alices-phone true", "alices-tablet true",
            ])
        try await phone.logout()
        #expect(
            try await tablet.pushDevices().map { "\($0.deviceId) \($0.receiving == true)" }.sorted() == [
                "alices-phone false", "alices-tablet true",
            ])
        try await tablet.unregisterPushToken()
        #expect(try await tablet.pushDevices().map(\.deviceId) == ["alices-phone"])
        do {
            try await tablet.registerPushToken("zz", platform: .apns, environment: .production, bundleID: "a")
            Issue.record("a malformed APNs token was accepted")
        } catch let error as RoostError {
            #expect(error.status == 400)
            #expect(error.code == "invalid_push_token")
        }
        await server.stop()
    }

    /// Seed 003's flow: one active session per user (the single-device policy), so a push reaches
    /// only the device that logged in last; through the SDK, the real APNs client and a fake APNs.
    @Test(
        .enabled(
            if: FakePushProvider.python != nil, "no Python with h2 (scripts/install-deps.sh --browser-tests)")
    )
    func underTheSingleDevicePolicyOnlyTheLastDeviceReceives() async throws {
        let gateway = try await FakeAPNs.start(authority: try await TestCertificateAuthority())
        let server = try await makeSingleDevicePushServer(sendingTo: gateway)
        let phone = try makeClient(port: server.port) { $0.deviceId = "phone" }
        let maria = try await phone.register(
            userName: "maria", password: "correct horse", email: "maria@example.com")
        try await phone.registerPushToken(
            Data(repeating: 0xaa, count: 32), environment: .sandbox, bundleID: gateway.topic)
        let tablet = try makeClient(port: server.port) { $0.deviceId = "tablet" }
        try await tablet.login(userName: "maria", password: "correct horse")
        try await tablet.registerPushToken(
            Data(repeating: 0xbb, count: 32), environment: .production, bundleID: gateway.topic)
        #expect(
            try await tablet.pushDevices().map { "\($0.deviceId) \($0.receiving == true)" }.sorted() == [
                "phone false", "tablet true",
            ])

        let login = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"dave","password":"dave-password"}"#)
        let admin = try #require(login.json["token"] as? String)
        let push = try await server.client.send(
            "POST", "/ff/push",
            json: #"{"users":["\#(maria.guid)"],"title":"Where U At?","body":"Maria is nearby"}"#,
            headers: [("X-Token", admin)])
        #expect(push.status == 202, "\(push.text)")
        #expect(push.json["devices"] as? Int == 1)
        #expect(try await eventually { gateway.requests.count == 1 })
        #expect(gateway.requests.first?["token"] as? String == String(repeating: "bb", count: 32))
        await server.stop()
        await gateway.fake.stop()
    }
}
