import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Several Roost instances on one PostgreSQL database, as behind a load balancer without sticky
/// sessions: whatever one instance did, the other knows (issue 15).
@Suite("Two instances on one PostgreSQL database")
struct SharedDatabaseTests {
    /// Two servers with data folders of their own on one fresh database.
    static func pair(
        configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (TestServer, TestServer, String) {
        let url = try await TestBackend.databaseURL(for: TestServer.makeTemporaryDirectory())
        let make = { @Sendable () async throws -> TestServer in
            try await TestServer { configuration in
                configuration.databaseURL = url
                configuration.databaseConnections = 3
                configuration.passwordHasher = PasswordHasher.cheapForTests()
                configure(&configuration)
            }
        }
        return (try await make(), try await make(), url)
    }

    static func register(_ server: TestServer, _ name: String) async throws -> String {
        let response = try await server.client.send(
            "POST", "/ff/register", json: #"{"userName":"\#(name)","password":"correct horse"}"#)
        guard response.status == 201, let token = response.json["token"] as? String else {
            throw TestClientError(description: "register: \(response.status) \(response.text)")
        }
        return token
    }

    static func login(
        _ server: TestServer, _ name: String, password: String = "correct horse", device: String
    )
        async throws -> TestResponse
    {
        try await server.client.send(
            "POST", "/ff/login",
            json: #"{"userName":"\#(name)","password":"\#(password)","deviceId":"\#(device)"}"#)
    }

    /// The status of a request only a live token may make.
    static func session(_ server: TestServer, _ token: String) async throws -> Int {
        try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", token)]).status
    }

    @Test("register on A, log in on B; each token works on both, and a logout on B ends it on A")
    func accountsAndTokensAreShared() async throws {
        let (a, b, _) = try await Self.pair()
        let fromA = try await Self.register(a, "ann")
        #expect(try await Self.session(b, fromA) == 200)
        let login = try await Self.login(b, "ann", device: "laptop")
        #expect(login.status == 200)
        let fromB = try #require(login.json["token"] as? String)
        #expect(try await Self.session(a, fromB) == 200)
        let logout = try await b.client.send("POST", "/ff/logout", headers: [("X-Token", fromA)])
        #expect(logout.status == 204 || logout.status == 200)
        #expect(try await Self.session(a, fromA) == 401)
        #expect(try await Self.session(a, fromB) == 200)
        await a.stop()
        await b.stop()
    }

    @Test("singleDevice holds across instances: a login on B ends the session made on A")
    func singleDeviceAcrossInstances() async throws {
        let (a, b, _) = try await Self.pair { $0.sessionPolicy = .singleDevice }
        _ = try await Self.register(a, "bea")
        let phone = try #require(try await Self.login(a, "bea", device: "phone").json["token"] as? String)
        let tablet = try #require(try await Self.login(b, "bea", device: "tablet").json["token"] as? String)
        for server in [a, b] {
            #expect(try await Self.session(server, phone) == 401)
            #expect(try await Self.session(server, tablet) == 200)
        }
        await a.stop()
        await b.stop()
    }

    @Test("an Idempotency-Key retried on the other instance replays the first answer")
    func idempotencyKeysAreShared() async throws {
        let (a, b, _) = try await Self.pair()
        let token = try await Self.register(a, "dan")
        let key = [("Idempotency-Key", "order-17"), ("X-Token", token)]
        let first = try await a.client.send("POST", "/ff/resources/Order", json: #"{"n":17}"#, headers: key)
        #expect(first.status == 201)
        let retried = try await b.client.send("POST", "/ff/resources/Order", json: #"{"n":17}"#, headers: key)
        #expect(retried.status == 201)
        #expect(retried.header("Idempotent-Replayed") == "true")
        #expect(retried.body == first.body)
        let listed = try await b.client.send(
            "GET", "/ff/resources/Order?total=true", headers: [("X-Token", token)])
        #expect(listed.json["total"] as? Int == 1)
        await a.stop()
        await b.stop()
    }

    @Test("failed logins count across instances: the throttle trips whichever instance is asked")
    func throttleCountsAcrossInstances() async throws {
        let (a, b, _) = try await Self.pair { $0.loginLimits = LoginThrottle.Limits(perAccount: 3) }
        _ = try await Self.register(a, "cy")
        for (index, server) in [a, b, a].enumerated() {
            let failed = try await Self.login(server, "cy", password: "wrong \(index)", device: "d")
            #expect(failed.status == 401)
        }
        let throttled = try await Self.login(b, "cy", device: "d")
        #expect(throttled.status == 429)
        #expect(throttled.json["code"] as? String == "too_many_attempts")
        #expect(throttled.header("Retry-After") != nil)
        await a.stop()
        await b.stop()
    }

    @Test("roost app apply --database reaches every instance within seconds, without a restart")
    func appDefinitionIsShared() async throws {
        let (a, b, url) = try await Self.pair()
        let auth = [("X-Token", try await Self.register(a, "eve"))]
        #expect(
            try await a.client.send("POST", "/ff/resources/Note", json: #"{"n":1}"#, headers: auth).status
                == 201)
        let file = TestServer.makeTemporaryDirectory() + "/roost.json"
        try Data(#"{"collections":{"Note":{"rules":{"create":"none"}}}}"#.utf8).write(
            to: URL(fileURLWithPath: file))
        let applied = try await runRoost(["app", "apply", file, "--database", url])
        #expect(applied.status == 0, "\(applied.errorOutput)")
        #expect(applied.output.contains("revision 1"))
        for server in [a, b] {
            let refused = await eventually(within: 10) {
                (try? await server.client.send("POST", "/ff/resources/Note", json: #"{"n":2}"#, headers: auth)
                    .status)
                    == 403
            }
            #expect(refused, "the instance on port \(server.port) put the stored definition in force")
        }
        // A new instance takes the stored definition at start.
        let c = try await TestServer { configuration in configuration.databaseURL = url }
        #expect(
            try await c.client.send("POST", "/ff/resources/Note", json: #"{"n":3}"#, headers: auth).status
                == 403)
        for server in [a, b, c] { await server.stop() }
    }

    @Test("a change made through A reaches a stream open on B")
    func eventsCrossInstances() async throws {
        let (a, b, _) = try await Self.pair()
        let reader = try await EventStreamReader(port: b.port, path: "/ff/events?collection=Post")
        #expect(reader.status == 200)
        #expect(try await reader.waitForComment(containing: "subscribed"))
        let token = try await Self.register(a, "fay")
        let created = try await a.client.send(
            "POST", "/ff/resources/Post", json: #"{"text":"hi"}"#, headers: [("X-Token", token)])
        #expect(created.status == 201)
        let event = try #require(try await reader.next())
        #expect(event.type == "create")
        #expect(event.guid == created.json["guid"] as? String)
        await a.stop()
        await b.stop()
    }
}
