import Foundation
import RoostCore
import RoostHTTP
import RoostTestSupport
import Testing

@Suite("Login throttle by client network")
struct AccountThrottleNetworkTests {
    @Test("failed logins from one IPv6 /64 count together, whichever of its addresses they come from")
    func throttlingCountsAnIPv6NetworkAsOneAddress() async throws {
        let proxies = try TrustedProxies("127.0.0.1, ::1")
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.loginLimits = LoginThrottle.Limits(perAccount: 100, perAddress: 3, window: 3_600_000)
            configuration.trustedProxies = proxies
        }
        _ = try await server.client.register("alice")
        func login(from address: String, as name: String) async throws -> TestResponse {
            try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"\#(name)","password":"wrong password"}"#,
                headers: [("X-Forwarded-For", address)])
        }
        // Three addresses of one /64, each a new one, each a different account.
        for (number, address) in ["2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff::3"].enumerated() {
            #expect(try await login(from: address, as: "user\(number)").status == 401)
        }
        let blocked = try await login(from: "2001:db8:0:1:abcd::9", as: "alice")
        #expect(blocked.status == 429)
        #expect(blocked.json["code"] as? String == "too_many_attempts")
        // The next /64 and an IPv4 client are their own.
        #expect(try await login(from: "2001:db8:0:2::1", as: "alice").status == 401)
        #expect(try await login(from: "198.51.100.7", as: "alice").status == 401)
        await server.stop()
    }
}
