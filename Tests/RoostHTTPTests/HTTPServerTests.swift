import Foundation
import RoostTestSupport
import Testing

@testable import RoostHTTP

/// A server with a few handlers that exercise the HTTP layer alone.
func makeServer(loops: Int = 2, readTimeout: Int = 30, idleTimeout: Int = 60, maxBody: Int = 1024) throws
    -> HTTPServer
{
    var router = Router { error, _ in
        switch error {
        case RoutingError.notFound: Response(status: 404, body: Array("no route".utf8))
        case RoutingError.methodNotAllowed: Response(status: 405)
        default: Response(status: 500)
        }
    }
    router.on(.get, "/hello/:name") {
        Response(status: 200, body: Array("hi \($0.parameters["name"]!)".utf8))
    }
    router.on(.get, "/files/*path") { Response(status: 200, body: Array($0.parameters["path"]!.utf8)) }
    router.on(.post, "/echo") { Response(status: 200, body: $0.body) }
    router.on(.get, "/slow") { _ in
        try await Task.sleep(nanoseconds: 800_000_000)
        return Response(status: 200, body: Array("slow".utf8))
    }
    let configuration = HTTPServer.Configuration(
        host: "127.0.0.1", port: 0, loopCount: loops,
        limits: RequestLimits(maxHeaderBytes: 4096, maxHeaderCount: 50, maxBodyBytes: maxBody),
        readTimeout: readTimeout,
        idleTimeout: idleTimeout)
    let server = HTTPServer(configuration: configuration, responder: router)
    try server.start()
    return server
}

@Suite("HTTP server on libevent")
struct HTTPServerTests {
    @Test("routes with parameters, wildcards, 404 and 405 with Allow")
    func routing() async throws {
        let server = try makeServer()
        let client = TestHTTPClient(port: server.port)
        let hello = try await client.send("GET", "/hello/a%20b")
        #expect(hello.status == 200)
        #expect(hello.text == "hi a b")
        #expect(try await client.send("GET", "/files/a/b%2Fc").text == "a/b/c")
        #expect(try await client.send("GET", "/nothing").status == 404)
        let wrongMethod = try await client.send("DELETE", "/hello/x")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")
        await server.shutdown()
    }

    @Test("HEAD answers like GET without the body")
    func head() async throws {
        let server = try makeServer()
        let response = try await TestHTTPClient(port: server.port).send("HEAD", "/hello/abc")
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "6")
        #expect(response.body.isEmpty)
        await server.shutdown()
    }

    @Test("keep-alive serves several requests, pipelined ones in order")
    func keepAlive() async throws {
        let server = try makeServer()
        let connection = try RawConnection(port: server.port)
        connection.send("GET /hello/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await connection.response().text == "hi 1")
        connection.send(
            "GET /hello/2 HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /hello/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        #expect(try await connection.response().text == "hi 2")
        #expect(try await connection.response().text == "abc")
        let last = try await connection.response()
        #expect(last.text == "hi 3")
        #expect(last.header("Connection") == "close")
        #expect(await connection.closed(within: 2))
        await server.shutdown()
    }

    @Test("an oversize body gets 413 in the error shape, and the connection closes")
    func bodyTooLarge() async throws {
        let server = try makeServer(maxBody: 1024)
        let connection = try RawConnection(port: server.port)
        connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
        let response = try await connection.response()
        #expect(response.status == 413)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(response.json["code"] as? String == "body_too_large")
        #expect(response.json["status"] as? Int == 413)
        #expect(await connection.closed(within: 2))
        let accepted = try await TestHTTPClient(port: server.port).send(
            "POST", "/echo", body: Array(repeating: 65, count: 1024))
        #expect(accepted.status == 200)
        #expect(accepted.body.count == 1024)
        await server.shutdown()
    }

    @Test("malformed requests get 400 and never reach a handler")
    func malformed() async throws {
        let server = try makeServer()
        let connection = try RawConnection(port: server.port)
        connection.send(
            "GET /hello/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
        let response = try await connection.response()
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "invalid_request")
        #expect(await connection.closed(within: 2))
        await server.shutdown()
    }

    @Test("a client sending headers a byte at a time is cut off at the read timeout")
    func slowHeaders() async throws {
        let server = try makeServer(readTimeout: 1, idleTimeout: 30)
        let connection = try RawConnection(port: server.port)
        // 60 bytes at 5 a second take 12 s; the read timeout is 1 s.
        var closedEarly = false
        for byte in "GET /hello/slowloris HTTP/1.1\r\nHost: x\r\nX-Padding: abcdefgh\r\n".utf8 {
            if !connection.send([byte]) {
                closedEarly = true
                break
            }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        #expect(closedEarly, "the server kept a connection whose headers never finished")
        let response = try await connection.response()
        #expect(response.status == 408)
        #expect(response.json["code"] as? String == "request_timeout")
        await server.shutdown()
    }

    @Test("an idle keep-alive connection is closed after the idle timeout")
    func idleTimeout() async throws {
        let server = try makeServer(readTimeout: 30, idleTimeout: 1)
        let connection = try RawConnection(port: server.port)
        connection.send("GET /hello/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await connection.response().status == 200)
        #expect(await connection.closed(within: 4))
        await server.shutdown()
    }

    @Test("a handler that waits does not hold up other connections on the same loop")
    func handlersDoNotBlockTheLoop() async throws {
        // The gated handler waits until the test has its fast answer; were the loop blocked
        // by the waiting handler, the fast request would never be answered and the test would fail.
        let gate = Gate()
        var router = Router { _, _ in Response(status: 500) }
        router.on(.get, "/gated") { _ in
            await gate.wait()
            return Response(status: 200, body: Array("gated".utf8))
        }
        router.on(.get, "/fast") { _ in Response(status: 200, body: Array("fast".utf8)) }
        let server = HTTPServer(configuration: .init(port: 0, loopCount: 1), responder: router)
        try server.start()
        let client = TestHTTPClient(port: server.port)
        async let gated = client.send("GET", "/gated")
        await gate.waitUntilSomeoneWaits()
        let fast = try await client.send("GET", "/fast")
        #expect(fast.text == "fast")
        await gate.open()
        #expect(try await gated.text == "gated")
        await server.shutdown()
    }

    @Test("shutdown lets a request in flight finish, then stops accepting")
    func gracefulShutdown() async throws {
        // The handler holds its request until shutdown has begun, so the request is in flight
        // however slowly a loaded machine delivers it.
        let gate = Gate()
        var router = Router { _, _ in Response(status: 500) }
        router.on(.get, "/slow") { _ in
            await gate.wait()
            return Response(status: 200, body: Array("slow".utf8))
        }
        let server = HTTPServer(configuration: .init(port: 0, loopCount: 1), responder: router)
        try server.start()
        let port = server.port
        async let slow = TestHTTPClient(port: port).send("GET", "/slow")
        await gate.waitUntilSomeoneWaits()
        async let stopped: Void = server.shutdown()
        try await Task.sleep(nanoseconds: 100_000_000)
        await gate.open()
        await stopped
        let response = try await slow
        #expect(response.status == 200)
        #expect(response.text == "slow")
        // Nothing of this server answers any more. (Tests run in parallel, so another test's
        // server may already listen on the freed port: that one has no /slow.)
        if let later = try? RawConnection(port: port, timeout: 2) {
            later.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect((try? later.readResponse())?.text != "slow")
        }
    }

    @Test("metrics count requests by route and status, and open connections")
    func metrics() async throws {
        let server = try makeServer()
        let client = TestHTTPClient(port: server.port)
        _ = try await client.send("GET", "/hello/a")
        _ = try await client.send("GET", "/hello/b")
        _ = try await client.send("GET", "/missing")
        let text = server.metrics.render()
        #expect(text.contains("roost_http_requests_total{route=\"/hello/:name\",status=\"200\"} 2"))
        #expect(text.contains("roost_http_requests_total{route=\"unmatched\",status=\"404\"} 1"))
        #expect(text.contains("roost_http_request_duration_seconds_count{route=\"/hello/:name\"} 2"))
        #expect(text.contains("roost_http_open_connections "))
        await server.shutdown()
    }
}

/// Lets a test hold a handler until it says so.
actor Gate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var watchers: [CheckedContinuation<Void, Never>] = []
    private var isOpen = false

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { continuation in
            waiters.append(continuation)
            for watcher in watchers { watcher.resume() }
            watchers = []
        }
    }

    func waitUntilSomeoneWaits() async {
        if !waiters.isEmpty { return }
        await withCheckedContinuation { watchers.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
