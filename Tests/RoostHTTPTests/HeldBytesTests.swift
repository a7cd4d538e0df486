import RoostTestSupport
import Testing

@testable import RoostHTTP

@Suite("HTTP memory held for requests")
struct HeldBytesTests {
    @Test(
        "connections together hold at most maxHeldRequestBytes; beyond, 503 server_busy, and the budget returns"
    )
    func budget() async throws {
        var router = Router { _, _ in Response(status: 500) }
        router.on(.post, "/echo") { Response(status: 200, body: Array("\($0.body.count)".utf8)) }
        var configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, loopCount: 2,
            limits: RequestLimits(maxBodyBytes: 1 << 20))
        configuration.maxHeldRequestBytes = 96 * 1024
        let server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        let port = server.port
        let head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
        // One slow sender holds 90 KB of its body...
        let holder = try RawConnection(port: port)
        holder.send(head + String(repeating: "a", count: 90_000))
        // (The first 16 KiB of each connection are not counted.)
        #expect(await eventually { server.heldBytes.current >= 90_000 - 16 * 1024 })
        // ...so a second one that needs 50 KB more is turned away.
        let refused = try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(head + String(repeating: "b", count: 50_000))
            return try connection.readResponse()
        }
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("\"code\":\"server_busy\""))
        // The first completes; once answered, what it held is free again.
        holder.send(String(repeating: "a", count: 10_000))
        #expect(try await holder.response().text == "100000")
        #expect(await eventually { server.heldBytes.current == 0 })
        let again = try await TestHTTPClient(port: port).send(
            "POST", "/echo", body: [UInt8](repeating: 1, count: 100_000))
        #expect(again.text == "100000")
        await server.shutdown()
    }
}
