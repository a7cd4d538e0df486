import RoostTestSupport
import Synchronization
import Testing

@testable import RoostHTTP

/// What a handler saw: that it started, and whether it was cancelled; and how many sinks opened.
final class HandlerLog: Sendable {
    private let state = Mutex<(started: Int, cancelled: Int, sinks: Int)>((0, 0, 0))
    func start() { state.withLock { $0.started += 1 } }
    func cancel() { state.withLock { $0.cancelled += 1 } }
    func openSink() { state.withLock { $0.sinks += 1 } }
    var started: Int { state.withLock { $0.started } }
    var cancelled: Int { state.withLock { $0.cancelled } }
    var sinks: Int { state.withLock { $0.sinks } }
}

@Suite("HTTP handler tasks and streamed-body admission")
struct HandlerCancellationTests {
    func makeServer(_ log: HandlerLog) throws -> HTTPServer {
        var router = Router { error, _ in Response(status: (error as? HTTPProtocolError)?.status ?? 500) }
        router.on(.get, "/wait") { _ in
            log.start()
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                log.cancel()
            }
            // Answers after its client is gone: the server must drop this quietly.
            return Response(status: 200, body: Array("late".utf8))
        }
        router.on(.get, "/hello") { _ in Response(status: 200, body: Array("hi".utf8)) }
        router.on(
            .put, "/upload/:name", streamingBody: true,
            admit: { request in
                guard request.parameters["name"] == "allowed" else {
                    throw HTTPProtocolError(status: 403, code: "forbidden", message: "no")
                }
            }
        ) { _ in Response(status: 200) }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, loopCount: 1)
        configuration.limits.streamedBodyLimit = { $0.target.hasPrefix("/upload") ? 1 << 20 : nil }
        configuration.bodySinks = { _ in
            log.openSink()
            throw HTTPProtocolError(status: 500, code: "internal", message: "test sink")
        }
        let server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        return server
    }

    @Test("a client that disconnects while its handler runs cancels the handler's task")
    func disconnectCancels() async throws {
        let log = HandlerLog()
        let server = try makeServer(log)
        do {
            let connection = try RawConnection(port: server.port)
            connection.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await eventually { log.started == 1 })
        }
        #expect(await eventually { log.cancelled == 1 })
        // The late answer went nowhere, and the loop serves the next client.
        #expect(try await TestHTTPClient(port: server.port).send("GET", "/hello").text == "hi")
        await server.shutdown()
    }

    @Test("a refused streamed request is answered at its head and its sink never opens")
    func admissionRefuses() async throws {
        let log = HandlerLog()
        let server = try makeServer(log)
        let port = server.port
        let refused = try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(
                "PUT /upload/other HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(refused.status == 403)
        #expect(refused.header("Connection") == "close")
        #expect(log.sinks == 0)
        #expect(server.uploads.inFlight == 0)
        await server.shutdown()
    }
}
