import Foundation
import RoostTestSupport
import Testing

/// Issue 28: the real binary, the real APNs client and a fake APNs speaking HTTP/2 over TLS.
@Suite(
    "Push through the real binary",
    .enabled(
        if: FakePushProvider.python != nil, "no Python with h2 (scripts/install-deps.sh --browser-tests)"))
struct PushProcessTests {
    /// Two users with an APNs device each; returns their guids.
    static func devices(_ client: TestHTTPClient) async throws -> (alice: String, bob: String) {
        var guids: [String] = []
        for (index, name) in ["alice", "bob"].enumerated() {
            let registered = try await client.register(name)
            let user = try #require(registered.json["user"] as? [String: Any])
            guids.append(try #require(user["guid"] as? String))
            let token = try await client.login(name, device: "phone")
            let put = try await client.send(
                "PUT", "/ff/push/devices/phone",
                json:
                    #"{"platform":"apns","token":"\#(apnsToken(index + 1))","environment":"production","bundleId":"org.roost.Tests"}"#,
                headers: [("X-Token", token)])
            #expect(put.status == 200, "\(put.text)")
        }
        return (guids[0], guids[1])
    }

    static func states(_ client: TestHTTPClient, push id: String, admin: String) async throws -> [String] {
        let status = try await client.send("GET", "/ff/push/\(id)", headers: [("X-Token", admin)])
        let deliveries = status.json["deliveries"] as? [[String: Any]] ?? []
        return deliveries.map { "\($0["userGuid"] as? String ?? "") \($0["state"] as? String ?? "")" }
            .sorted()
    }

    @Test(
        "kill -9 mid-dispatch: the delivery APNs answered is not sent again, the one in flight is, nothing is lost",
        .enabled(if: TestBackend.isSQLite, "PostgreSQL's lease lapse is covered by PushCrashTests"))
    func killMidDispatch() async throws {
        let directory = try await makeDataFolder()
        let made = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(made.status == 0, "\(made.errorOutput)")
        // Bob's token never gets an answer from the first gateway: his delivery is in flight.
        let first = try await FakeAPNs.start(
            authority: try await TestCertificateAuthority(),
            script: #"{"tokens":{"\#(apnsToken(2))":{"hang":true}}}"#)
        let server = try RoostProcess(dataDirectory: directory, arguments: first.serveArguments)
        let client = TestHTTPClient(port: server.port)
        let admin = try await client.login("dave", password: "dave-password")
        let users = try await Self.devices(client)
        let push = try await client.send(
            "POST", "/ff/push",
            json: #"{"users":["\#(users.alice)","\#(users.bob)"],"title":"Hi","body":"both"}"#,
            headers: [("X-Token", admin)])
        #expect(push.status == 202, "\(push.text)")
        let id = try #require(push.json["id"] as? String)
        #expect(
            try await eventually {
                try await Self.states(client, push: id, admin: admin)
                    == [
                        "\(users.alice) delivered", "\(users.bob) sending",
                    ].sorted() && first.requests.count == 2
            })
        #expect(try await server.stop(signal: SIGKILL) == SIGKILL)
        await first.fake.stop()

        let second = try await FakeAPNs.start(authority: try await TestCertificateAuthority())
        let restarted = try RoostProcess(dataDirectory: directory, arguments: second.serveArguments)
        let reader = TestHTTPClient(port: restarted.port)
        let again = try await reader.login("dave", password: "dave-password")
        #expect(
            try await eventually {
                try await Self.states(reader, push: id, admin: again)
                    == [
                        "\(users.alice) delivered", "\(users.bob) delivered",
                    ].sorted()
            })
        // Alice's push reached APNs once, before the kill; Bob's twice: the first answer was lost.
        #expect(second.requests.map { $0["token"] as? String } == [apnsToken(2)])
        let payload = try #require(second.requests.first?["payload"] as? [String: Any])
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps["alert"] as? [String: String] == ["title": "Hi", "body": "both"])
        let metrics = try await reader.send("GET", "/metrics", headers: [("X-Token", again)])
        #expect(metrics.text.contains("roost_push_uncertain_total 1\n"), "\(metrics.text.prefix(200))")
        #expect(try await restarted.stop(signal: SIGTERM) == 0)
        await second.fake.stop()
    }

    @Test("a push to an unregistered token deletes that device's token, through the binary")
    func unregisteredTokenIsDeleted() async throws {
        let directory = try await makeDataFolder()
        _ = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        let gateway = try await FakeAPNs.start(
            authority: try await TestCertificateAuthority(),
            script: #"{"tokens":{"\#(apnsToken(1))":{"status":410,"reason":"Unregistered"}}}"#)
        let server = try RoostProcess(dataDirectory: directory, arguments: gateway.serveArguments)
        let client = TestHTTPClient(port: server.port)
        let admin = try await client.login("dave", password: "dave-password")
        let users = try await Self.devices(client)
        let push = try await client.send(
            "POST", "/ff/push", json: #"{"users":["\#(users.alice)","\#(users.bob)"],"body":"x"}"#,
            headers: [("X-Token", admin)])
        let id = try #require(push.json["id"] as? String)
        #expect(
            try await eventually {
                try await Self.states(client, push: id, admin: admin)
                    == [
                        "\(users.alice) invalid", "\(users.bob) delivered",
                    ].sorted()
            })
        let listed = try await client.send("GET", "/ff/push/devices", headers: [("X-Token", admin)])
        let owners = (listed.json["items"] as? [[String: Any]] ?? []).map { $0["userGuid"] as? String }
        #expect(owners == [users.bob])
        #expect(try await server.stop(signal: SIGTERM) == 0)
        await gateway.fake.stop()
    }

    @Test("roost push test sends one notification to each of the user's devices and prints the answers")
    func pushTestCommand() async throws {
        let directory = try await makeDataFolder()
        let gateway = try await FakeAPNs.start(
            authority: try await TestCertificateAuthority(),
            script: #"{"tokens":{"\#(apnsToken(2))":{"status":400,"reason":"BadDeviceToken"}}}"#)
        let server = try RoostProcess(dataDirectory: directory)
        _ = try await Self.devices(TestHTTPClient(port: server.port))
        #expect(try await server.stop(signal: SIGTERM) == 0)
        let database = TestBackend.databaseArguments(for: directory) + ["--data-dir", directory]

        let sent = try await runRoost(
            ["push", "test", "--user", "alice", "--title", "Hello"] + gateway.serveArguments + database)
        #expect(sent.status == 0, "\(sent.errorOutput)")
        let line = try #require(sent.output.split(separator: "\n").first.map(String.init))
        #expect(
            line.hasPrefix("phone (apns production, token …\(apnsToken(1).suffix(8))): delivered ("),
            "\(line)")
        #expect(gateway.requests.map { $0["token"] as? String } == [apnsToken(1)])
        let aps = (gateway.requests.first?["payload"] as? [String: Any])?["aps"] as? [String: Any]
        #expect(
            aps?["alert"] as? [String: String] == [
                "title": "Hello", "body": "A test notification from roost push test",
            ])

        let refused = try await runRoost(
            ["push", "test", "--user", "bob"] + gateway.serveArguments + database)
        #expect(refused.status == 1)
        #expect(
            refused.output
                == "phone (apns production, token …\(apnsToken(2).suffix(8))): invalid token, BadDeviceToken\n"
        )
        let unknown = try await runRoost(
            ["push", "test", "--user", "carol"] + gateway.serveArguments + database)
        #expect(unknown.status == 1)
        #expect(unknown.errorOutput == "roost: no user named 'carol'\n")
        let unconfigured = try await runRoost(["push", "test", "--user", "alice"] + database)
        #expect(unconfigured.status == 78)
        #expect(
            unconfigured.errorOutput.hasPrefix("roost: no push provider is configured: give --apns-key-file"))
        let usage = try await runRoost(["push", "test"] + database)
        #expect(usage.status == 64)
        #expect(
            usage.errorOutput
                == "roost: 'roost push test' needs --user NAME\nRun 'roost push --help' for the usage.\n")
        await gateway.fake.stop()
    }
}
