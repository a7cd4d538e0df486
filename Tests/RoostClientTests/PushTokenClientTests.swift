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
        #expect(device.token == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(device.environment == .sandbox)

        let tablet = try makeClient(port: server.port) { $0.deviceId = "alices-tablet" }
        try await tablet.login(userName: "alice", password: "correct horse")
        try await tablet.registerPushToken(
            "fcm-registration-token", platform: .fcm, bundleID: "com.example.app")
        #expect(
            try await tablet.pushDevices().map { "\($0.deviceId) \($0.receiving)" }.sorted() == [
                "alices-phone true", "alices-tablet true",
            ])
        try await phone.logout()
        #expect(
            try await tablet.pushDevices().map { "\($0.deviceId) \($0.receiving)" }.sorted() == [
                "alices-phone false", "alices-tablet true",
            ])
        try await tablet.unregisterPushToken()
        #expect(try await tablet.pushDevices().map(\.deviceId) == ["alices-phone"])
        do {
            try await tablet.registerPushToken("zz", platform: .apns, environment: .production, bundleID: "a")
            Issue.record("a malformed APNs token was accepted")
        } catch let error as RoostError {
            #expect(error.status == 400)
            #expect(error.code == "invalid_field")
        }
        await server.stop()
    }
}
