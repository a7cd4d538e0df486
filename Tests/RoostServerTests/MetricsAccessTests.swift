import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostTestSupport
import Testing

/// Issue 24, item 16: `/metrics` names every script, so only administrators and the addresses
/// `--metrics-allow` lists read it.
@Suite("Metrics access")
struct MetricsAccessTests {
    /// A server with an administrator (made with the real `roost users create --admin`) and a user.
    private static func server(_ configure: @escaping (inout ServerConfiguration) -> Void) async throws -> (
        server: TestServer, admin: String, user: String
    ) {
        let directory = try await makeDataFolder()
        let made = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        guard made.status == 0 else { throw TestClientError(description: made.errorOutput) }
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configure(&configuration)
        }
        let admin = try await server.client.login("dave", password: "dave-password")
        let user = try #require(try await server.client.register("bob").json["token"] as? String)
        return (server, admin, user)
    }

    @Test("without --metrics-allow, only an administrator's token reads /metrics")
    func onlyAdministrators() async throws {
        let (server, admin, user) = try await Self.server { $0.metricsAllowed = TrustedProxies() }
        let anonymous = try await server.client.send("GET", "/metrics")
        #expect(anonymous.status == 403)
        #expect(anonymous.json["code"] as? String == "metrics_not_allowed")
        #expect(!anonymous.text.contains("roost_"))
        let ordinary = try await server.client.send("GET", "/metrics", headers: [("X-Token", user)])
        #expect(ordinary.status == 403)
        #expect(ordinary.json["code"] as? String == "metrics_not_allowed")
        let forged = try await server.client.send(
            "GET", "/metrics", headers: [("Authorization", "Bearer not-a-token")])
        #expect(forged.status == 401)
        let allowed = try await server.client.send(
            "GET", "/metrics", headers: [("Authorization", "Bearer \(admin)")])
        #expect(allowed.status == 200)
        #expect(allowed.text.contains("roost_event_streams 0\n"))
        await server.stop()
    }

    @Test("--metrics-allow serves its range without a token, judged by the client a trusted proxy names")
    func allowedRangeBehindAProxy() async throws {
        let (server, _, user) = try await Self.server { configuration in
            configuration.metricsAllowed = try! TrustedProxies("10.0.0.0/8,127.0.0.2")
            configuration.trustedProxies = try! TrustedProxies("127.0.0.1")
        }
        // The proxy itself (127.0.0.1) is not in the range: a request it forwards from the
        // internet is refused, even though it comes from this machine.
        let proxied = try await server.client.send(
            "GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.9")])
        #expect(proxied.status == 403)
        let direct = try await server.client.send("GET", "/metrics")
        #expect(direct.status == 403)
        let scraper = try await server.client.send(
            "GET", "/metrics", headers: [("X-Forwarded-For", "10.1.2.3")])
        #expect(scraper.status == 200)
        #expect(scraper.text.contains("roost_event_streams"))
        // A user's token changes nothing for an allowed address.
        let withToken = try await server.client.send(
            "GET", "/metrics", headers: [("X-Forwarded-For", "127.0.0.2"), ("X-Token", user)])
        #expect(withToken.status == 200)
        await server.stop()
    }

    @Test("roost serve --metrics-allow: documented, checked, applied")
    func theFlag() async throws {
        let help = try await runRoost(["serve", "--help"])
        #expect(help.output.contains("--metrics-allow CIDR,..."))
        let bad = try await runRoost(["serve", "--metrics-allow", "10.0.0.1/8", "--port", "0"])
        #expect(bad.status == 64)
        #expect(bad.errorOutput.contains("--metrics-allow: '10.0.0.1/8' has bits set past its prefix"))
        let directory = TestServer.makeTemporaryDirectory()
        let elsewhere = try RoostProcess(
            dataDirectory: directory, arguments: ["--metrics-allow", "10.0.0.0/8"])
        let refused = try await TestHTTPClient(port: elsewhere.port).send("GET", "/metrics")
        #expect(refused.status == 403)
        #expect(try await elsewhere.stop(signal: SIGTERM) == 0)
        let here = try RoostProcess(dataDirectory: directory, arguments: ["--metrics-allow", "127.0.0.1"])
        #expect(try await TestHTTPClient(port: here.port).send("GET", "/metrics").status == 200)
        #expect(try await here.stop(signal: SIGTERM) == 0)
    }
}
