import RoostTestSupport
import Testing

@testable import RoostHTTP

/// One loop's accept takes a whole burst of connections (issue 34: 83% of 1,000 event streams on
/// one loop, one core): each accepted connection goes to the loop holding the fewest.
@Suite("Connections spread over the loops")
struct LoopBalanceTests {
    @Test("a burst of connections is shared evenly by the loops, and a closed one frees its loop's place")
    func burstIsShared() async throws {
        let router = Router { _, _ in Response(status: 200) }
        let server = HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, loopCount: 2),
            responder: router)
        try server.start()
        // Opened back to back: one loop's accept would take most of them.
        var connections: [RawConnection] = []
        for _ in 0..<40 { connections.append(try RawConnection(port: server.port)) }
        #expect(await eventually { server.metrics.openConnections == 40 })
        #expect(await eventually { server.connectionsPerLoop == [20, 20] })
        connections.removeLast().hangUp()
        #expect(await eventually { server.connectionsPerLoop.reduce(0, +) == 39 })
        // Every loop answers the connections it was given, with what they sent before.
        for connection in connections {
            _ = connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await offCooperativePool { try connection.readResponse() }.status == 200)
        }
        await server.shutdown()
    }
}
