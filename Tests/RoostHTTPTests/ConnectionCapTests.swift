import RoostTestSupport
import Testing

@testable import RoostHTTP

/// Issue 24, item 7: one address may not hold every connection slot. Each loopback address is a
/// client of its own (127.0.0.2 is bound as the source to be a second one).
@Suite("Connections per client address", .serialized)
struct ConnectionCapTests {
    func startServer(perClient: Int, trusting proxies: String = "") throws -> HTTPServer {
        var router = Router { _, _ in Response(status: 404) }
        router.on(.get, "/hello") { _ in Response(status: 200, body: Array("hi".utf8)) }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, loopCount: 2)
        configuration.maxConnectionsPerClient = perClient
        // The held connections idle for as long as the test takes under the suite's load.
        configuration.idleTimeout = 3600
        configuration.trustedProxies = try TrustedProxies(proxies)
        let server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        return server
    }

    func hello(_ connection: RawConnection) async throws -> Int {
        connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        return try await connection.response().status
    }

    /// Opens connections one at a time, each counted by the server before the next, so which one
    /// is over the cap does not depend on which loop accepts first.
    func open(_ count: Int, from source: String, on server: HTTPServer) async throws -> [RawConnection] {
        var opened: [RawConnection] = []
        for _ in 0..<count {
            let expected = server.metrics.openConnections + 1
            opened.append(try RawConnection(port: server.port, from: source))
            #expect(await eventually { server.metrics.openConnections == expected })
        }
        return opened
    }

    @Test(
        "N idle connections from one address: the next is 503 server_busy and closed, another address still connects"
    )
    func oneAddressCannotHoldEverySlot() async throws {
        let server = try startServer(perClient: 3)
        let idle = try await open(3, from: "127.0.0.1", on: server)

        let refused = try RawConnection(port: server.port, from: "127.0.0.1")
        let answer = try await refused.response()
        #expect(answer.status == 503)
        #expect(answer.json["code"] as? String == "server_busy")
        #expect(answer.header("Retry-After") == "5")
        #expect(answer.header("Connection") == "close")
        #expect(await refused.closed(within: 10))

        let other = try RawConnection(port: server.port, from: "127.0.0.2")
        #expect(try await hello(other) == 200)
        // The held connections are served as before.
        #expect(try await hello(idle[0]) == 200)

        // A closed connection gives its slot back.
        idle[1].hangUp()
        #expect(await eventually { server.metrics.openConnections == 3 })
        let again = try RawConnection(port: server.port, from: "127.0.0.1")
        #expect(try await hello(again) == 200)
        await server.shutdown()
    }

    @Test("a trusted proxy's connections carry many clients and are not counted")
    func trustedProxiesAreNotCounted() async throws {
        let server = try startServer(perClient: 2, trusting: "127.0.0.3")
        let proxied = try await open(5, from: "127.0.0.3", on: server)
        for connection in proxied { #expect(try await hello(connection) == 200) }
        // Other addresses still are.
        let held = try await open(2, from: "127.0.0.1", on: server)
        let refused = try RawConnection(port: server.port, from: "127.0.0.1")
        #expect(try await refused.response().status == 503)
        #expect(held.count == 2)
        await server.shutdown()
    }
}
