import Foundation
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostHTTP

/// A server whose one route streams: each request's stream is handed to the test.
final class StreamingServer: Sendable {
    let server: HTTPServer
    private final class Streams: Sendable {
        let list = Mutex<[ResponseStream]>([])
    }
    private let streams = Streams()

    init(readTimeout: Int = 30, bufferLimit: Int = 1 << 20) throws {
        var router = Router { _, _ in Response(status: 404) }
        let streams = self.streams
        router.on(.get, "/stream") { _ in
            let stream = ResponseStream(bufferLimit: bufferLimit)
            // Sent before the connection has taken the stream: kept and written first.
            stream.send(Array("first\n".utf8), farewell: [])
            streams.list.withLock { $0.append(stream) }
            var response = Response(status: 200)
            response.headers.set("Content-Type", "text/plain")
            response.stream = stream
            return response
        }
        server = HTTPServer(
            configuration: HTTPServer.Configuration(port: 0, loopCount: 1, readTimeout: readTimeout),
            responder: router)
        try server.start()
    }

    /// The stream of the `index`th request, once its handler has run.
    func stream(_ index: Int) async -> ResponseStream? {
        _ = await eventually { self.streams.list.withLock { $0.count > index } }
        return streams.list.withLock { $0.count > index ? $0[index] : nil }
    }

    /// Opens `GET /stream` and reads the head.
    func open() async throws -> (RawConnection, TestResponse) {
        let connection = try RawConnection(port: server.port)
        connection.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try await offCooperativePool { try connection.readResponse(head: true) }
        return (connection, head)
    }
}

/// Reads from `connection` until `text` has arrived; everything read.
func read(_ connection: RawConnection, until text: String) async throws -> String {
    var received = ""
    while !received.contains(text) {
        guard let chunk = try await offCooperativePool({ try connection.receiveChunk() }) else { break }
        received += String(decoding: chunk, as: UTF8.self)
    }
    return received
}

@Suite("Streamed responses")
struct ResponseStreamTests {
    @Test("the head has no length and closes; bytes sent before and after it arrive in order; finish ends it")
    func streams() async throws {
        let server = try StreamingServer()
        let (connection, head) = try await server.open()
        #expect(
            head.status == 200 && head.header("Content-Length") == nil && head.header("Connection") == "close"
        )
        let stream = try #require(await server.stream(0))
        #expect(stream.send(Array("second\n".utf8), farewell: []) == .queued)
        stream.finish(Array("last\n".utf8))
        let body = try await read(connection, until: "last\n")
        #expect(body == "first\nsecond\nlast\n")
        #expect(await connection.closed(within: 5))
        #expect(stream.isEnded && stream.send([1], farewell: []) == .ended)
        await server.server.shutdown()
    }

    @Test("a client that goes away ends the stream, and whoever asked is told")
    func clientGoneEndsStream() async throws {
        let server = try StreamingServer()
        let (connection, _) = try await server.open()
        let stream = try #require(await server.stream(0))
        let told = Atomic(false)
        stream.onEnd { told.store(true, ordering: .relaxed) }
        connection.hangUp()
        #expect(await eventually { told.load(ordering: .relaxed) && stream.isEnded })
        #expect(server.server.metrics.openConnections == 0)
        await server.server.shutdown()
    }

    @Test("a stream outlives the read timeout")
    func noReadTimeout() async throws {
        let server = try StreamingServer(readTimeout: 1)
        let (connection, _) = try await server.open()
        let stream = try #require(await server.stream(0))
        // Three deadline checks pass; a request would have been cut at the first.
        try await Task.sleep(for: .milliseconds(2500))
        #expect(stream.send(Array("still here\n".utf8), farewell: []) == .queued)
        #expect(try await read(connection, until: "still here").hasSuffix("still here\n"))
        await server.server.shutdown()
    }

    @Test(
        "over the limit, the farewell is sent instead and the stream ends; one piece bigger than the limit still goes alone"
    )
    func limit() async throws {
        let server = try StreamingServer(bufferLimit: 10_000)
        let (connection, _) = try await server.open()
        let stream = try #require(await server.stream(0))
        _ = try await read(connection, until: "first\n")
        // Alone, a piece over the limit is sent: otherwise it could never be.
        #expect(stream.send([UInt8](repeating: 65, count: 15_000), farewell: []) == .queued)
        // The client reads nothing: once the socket's buffers are full, the output grows.
        var outcome = ResponseStream.Outcome.queued
        var sent = 0
        while outcome == .queued && sent < 50_000 {
            outcome = stream.send([UInt8](repeating: 66, count: 1000), farewell: Array("bye\n".utf8))
            sent += 1
        }
        #expect(outcome == .overLimit)
        #expect(stream.send([1], farewell: []) == .ended)
        let body = try await read(connection, until: "bye\n")
        #expect(body.hasSuffix("bye\n") && body.hasPrefix(String(repeating: "A", count: 15_000)))
        #expect(await connection.closed(within: 5))
        await server.server.shutdown()
    }

    @Test("shutdown ends open streams")
    func shutdownEnds() async throws {
        let server = try StreamingServer()
        let (connection, _) = try await server.open()
        let stream = try #require(await server.stream(0))
        await server.server.shutdown(gracePeriod: 5)
        #expect(stream.isEnded)
        #expect(try await read(connection, until: "never").hasPrefix("first\n"))
    }
}
