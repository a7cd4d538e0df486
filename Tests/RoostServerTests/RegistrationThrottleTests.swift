import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostTestSupport
import Testing

/// Issue 24, item 6: 125 accounts from one address in 2.3 s took every stream slot. Registrations
/// are throttled per client address (an IPv6 /64 as one).
@Suite("Registration throttle")
struct RegistrationThrottleTests {
    private static func server(
        limit: Int, clock: ManualWallClock = ManualWallClock(), proxies: String? = nil
    ) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.clock = clock
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.loginLimits.registrationsPerAddress = limit
            if let proxies { configuration.trustedProxies = try! TrustedProxies(proxies) }
        }
    }

    @Test("past the limit every registration gets one 429 with Retry-After, taken name or not")
    func limitPerAddress() async throws {
        let clock = ManualWallClock()
        let server = try await Self.server(limit: 3, clock: clock)
        #expect(try await server.client.register("ann").status == 201)
        #expect(try await server.client.register("ben").status == 201)
        // A taken name counts: registration would otherwise test names without end.
        #expect(try await server.client.register("ann").status == 409)
        var answers: Set<String> = []
        for name in ["cat", "ann", "no spaces allowed"] {
            let refused = try await server.client.register(name)
            #expect(refused.status == 429)
            #expect(refused.json["code"] as? String == "too_many_registrations")
            #expect(refused.header("Retry-After") == "3600")
            #expect((refused.json["details"] as? [String: Any])?["retryAfter"] as? Int == 3600)
            answers.insert(refused.text)
        }
        #expect(answers.count == 1, "\(answers)")
        // Logins are not registrations.
        _ = try await server.client.login("ann")
        clock.advance(seconds: 3599)
        #expect(try await server.client.register("cat").status == 429)
        // The three counted at one moment leave the window together.
        clock.advance(seconds: 1)
        for name in ["cat", "dan", "eve"] { #expect(try await server.client.register(name).status == 201) }
        #expect(try await server.client.register("fay").status == 429)
        await server.stop()
    }

    @Test("an IPv6 /64 is one address; another /64 or IPv4 address has its own count")
    func networksCountAsOne() async throws {
        let server = try await Self.server(limit: 2, proxies: "127.0.0.1")
        func register(_ name: String, from address: String) async throws -> Int {
            try await server.client.send(
                "POST", "/ff/register", json: #"{"userName":"\#(name)","password":"correct horse"}"#,
                headers: [("X-Forwarded-For", address)]
            ).status
        }
        #expect(try await register("u1", from: "2001:db8:0:1::1") == 201)
        #expect(try await register("u2", from: "2001:db8:0:1:ffff::2") == 201)
        #expect(try await register("u3", from: "2001:db8:0:1::3") == 429)
        #expect(try await register("u4", from: "2001:db8:0:2::1") == 201)
        #expect(try await register("u5", from: "198.51.100.7") == 201)
        await server.stop()
    }

    @Test("a burst of parallel registrations does not slip past the limit")
    func parallelBurst() async throws {
        let server = try await Self.server(limit: 5)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<30 {
                group.addTask { try await server.client.register("burst\(index)").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Attempts that lose the race are refused, all of them on a database where every attempt
        // is counted before any is checked again: never more than the limit get in.
        let created = statuses.filter { $0 == 201 }.count
        #expect(created <= 5, "\(statuses)")
        #expect(statuses.allSatisfy { $0 == 201 || $0 == 429 }, "\(statuses)")
        await server.stop()
    }

    @Test(
        "instances sharing a PostgreSQL database count one address's registrations together",
        .enabled(if: !TestBackend.isSQLite))
    func sharedAcrossInstances() async throws {
        let url = try await TestBackend.databaseURL(for: TestServer.makeTemporaryDirectory())
        var servers: [TestServer] = []
        for _ in 0..<2 {
            servers.append(
                try await TestServer { configuration in
                    configuration.databaseURL = url
                    configuration.passwordHasher = PasswordHasher.cheapForTests()
                    configuration.loginLimits.registrationsPerAddress = 2
                })
        }
        #expect(try await servers[0].client.register("left").status == 201)
        #expect(try await servers[1].client.register("right").status == 201)
        #expect(try await servers[0].client.register("third").status == 429)
        #expect(try await servers[1].client.register("third").status == 429)
        for server in servers { await server.stop() }
    }

    @Test("roost serve --max-registrations: documented, checked, applied; 10 by default")
    func theFlag() async throws {
        #expect(LoginThrottle.Limits().registrationsPerAddress == 10)
        let help = try await runRoost(["serve", "--help"])
        #expect(help.output.contains("--max-registrations N"))
        let bad = try await runRoost(["serve", "--max-registrations", "-1"])
        #expect(bad.status == 64)
        let server = try RoostProcess(
            dataDirectory: TestServer.makeTemporaryDirectory(),
            arguments: ["--max-registrations", "1"])
        let client = TestHTTPClient(port: server.port)
        #expect(try await client.register("only").status == 201)
        let refused = try await client.register("second")
        #expect(refused.status == 429)
        #expect(refused.json["code"] as? String == "too_many_registrations")
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 > 3500)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }
}
