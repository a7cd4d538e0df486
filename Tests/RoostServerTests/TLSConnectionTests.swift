import Foundation
import RoostServer
import RoostTestSupport
import Testing

/// Issue 14, item 1, continued: what happens to connections over TLS. A certificate reloaded on
/// SIGHUP while a keep-alive connection stays open, the plain listener that redirects to HTTPS,
/// and clients that never finish a handshake or send garbage instead.
@Suite("TLS connections", .serialized)
struct TLSConnectionTests {
    let tests = TLSTests()

    @Test("SIGHUP switches to a new certificate without dropping an open keep-alive connection")
    func reloadOnHangup() async throws {
        let authority = try await TestCertificateAuthority()
        let first = try await authority.issue("first")
        let second = try await authority.issue("second")
        let live = (certificate: authority.folder + "/live.pem", key: authority.folder + "/live.key")
        func install(_ pair: (certificate: String, key: String)) throws {
            for (from, to) in [(pair.certificate, live.certificate), (pair.key, live.key)] {
                try? FileManager.default.removeItem(atPath: to)
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
        }
        try install(first)
        let dataDirectory = TestServer.makeTemporaryDirectory()
        let server = try tests.serveTLS(live, dataDirectory: dataDirectory)
        let port = String(server.port)
        try install(second)

        let reload = try await pythonTLS("reload", port, authority.certificate, String(server.process.pid))
        #expect(reload["before"] as? Int == 200)
        #expect(reload["after"] as? Int == 200)
        #expect(reload["kept"] as? Bool == true)
        #expect(reload["changed"] as? Bool == true)
        let log = dataDirectory + ".log"

        // A broken file is refused and the running certificate stays.
        let serving = try await pythonTLS("get", port, authority.certificate, "localhost", "/health")
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: live.certificate))
        server.process.signal(SIGHUP)
        let refusal =
            " error - TLS certificate not reloaded; the running one stays in force: the certificate file \(live.certificate) holds no PEM data; it must start with -----BEGIN CERTIFICATE-----\n"
        #expect(
            await eventually { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(refusal) }
        )
        let still = try await pythonTLS("get", port, authority.certificate, "localhost", "/health")
        #expect(still["status"] as? Int == 200)
        #expect(still["serial"] as? String == serving["serial"] as? String)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    /// Sends one request to a plain port and reads the answer; the server closes afterwards.
    func ask(_ port: Int, host: String, target: String, method: String = "GET") async throws -> (
        TestResponse, closed: Bool
    ) {
        let connection = try RawConnection(port: port)
        connection.send("\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 2\r\n\r\n{}")
        let response = try await connection.response()
        return (response, await connection.closed(within: 10))
    }

    @Test("--redirect-http answers 308 to the host asked for over HTTPS, with Connection: close")
    func redirectListener() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try await tests.tlsServer(try await authority.issue("server")) {
            $0.redirectHTTPPort = 0
        }
        let redirect = try #require(server.application.redirectPort)
        let https = server.port

        let (moved, closed) = try await ask(
            redirect, host: "localhost:\(redirect)", target: "/ff/resources/Post?x=1")
        #expect(moved.status == 308)
        #expect(moved.header("Location") == "https://localhost:\(https)/ff/resources/Post?x=1")
        #expect(moved.header("Connection") == "close")
        #expect(moved.header("Strict-Transport-Security") == nil)
        #expect(closed)
        // A POST keeps its method through a 308 (the client sends it again to the new place).
        let posted = try await ask(
            redirect, host: "example.com", target: "/ff/resources/Post", method: "POST")
        #expect(posted.0.status == 308)
        #expect(posted.0.header("Location") == "https://example.com:\(https)/ff/resources/Post")
        let literal = try await ask(redirect, host: "[::1]:80", target: "//evil.com/")
        #expect(literal.0.header("Location") == "https://[::1]:\(https)//evil.com/")

        for host in [
            "evil.com@good.com", "good.com/evil", "good.com:80:90", "good.com:x", "[::1", "x_y.com", "a,b",
        ] {
            let (refused, closed) = try await ask(redirect, host: host, target: "/")
            #expect(refused.status == 400, "\(host)")
            #expect(refused.json["code"] as? String == "invalid_host", "\(host)")
            #expect(refused.header("Location") == nil)
            #expect(closed)
        }
        // Two Host headers: which one would the redirect name? Neither.
        let twice = try RawConnection(port: redirect)
        twice.send("GET / HTTP/1.1\r\nHost: good.com\r\nHost: evil.com\r\n\r\n")
        let ambiguous = try await twice.response()
        #expect(ambiguous.status == 400)
        #expect(ambiguous.header("Location") == nil)
        await server.stop()
    }

    @Test("a streamed upload, a file download and a range over one keep-alive TLS connection")
    func blobsOverTLS() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try await tests.tlsServer(try await authority.issue("server")) {
            $0.appDefinition = openRules
        }
        let result = try await pythonTLS("blob", String(server.port), authority.certificate, String(3 << 20))
        #expect(result["created"] as? Int == 201)
        #expect(result["uploaded"] as? Int == 200)
        #expect(result["downloaded"] as? Int == 200)
        #expect(result["same"] as? Bool == true)
        #expect(result["range"] as? Int == 206)
        #expect(result["part"] as? Bool == true)
        await server.stop()
    }

    @Test("a client that connects and sends nothing is dropped after the read timeout")
    func silentClientTimesOut() async throws {
        let authority = try await TestCertificateAuthority()
        // A plain connection that sends nothing would wait for the 60 s idle timeout.
        let server = try await tests.tlsServer(try await authority.issue("server")) {
            $0.readTimeout = 1
            $0.idleTimeout = 60
        }
        let silent = try RawConnection(port: server.port)
        #expect(await silent.closed(within: 20))
        await server.stop()
    }

    @Test("a handshake that never finishes is closed at the handshake deadline, long before the read timeout")
    func handshakeDeadline() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try await tests.tlsServer(try await authority.issue("server")) {
            $0.readTimeout = 120
            $0.idleTimeout = 120
            $0.tlsHandshakeTimeout = 1
        }
        let started = Date()
        let stalled = try RawConnection(port: server.port)
        stalled.send([0x16, 0x03, 0x01])  // the first bytes of a ClientHello, and no more
        #expect(await stalled.closed(within: 60))
        #expect(Date().timeIntervalSince(started) < 60)
        let health = try await pythonTLS(
            "get", String(server.port), authority.certificate, "localhost", "/health")
        #expect(health["status"] as? Int == 200)
        await server.stop()
    }

    @Test("connections in their handshake count toward the connection cap")
    func handshakesCountTowardTheCap() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try await tests.tlsServer(try await authority.issue("server")) {
            $0.maxConnections = 2
            $0.readTimeout = 120  // the two held handshakes must outlive a slow run
            $0.tlsHandshakeTimeout = 120
        }
        let port = String(server.port)
        // Several loops accept at once, so which of three connections is over the cap is not
        // arrival order: exactly one of them is closed, at once and without a byte (a plaintext
        // 503 would be garbage to TLS).
        let three = try (0..<3).map { _ in try RawConnection(port: server.port) }
        var closed: [Int] = []
        let deadline = Date().addingTimeInterval(20)  // for a machine busy with the whole suite
        while closed.isEmpty && Date() < deadline {
            for (index, connection) in three.enumerated() where await connection.closed(within: 0.1) {
                closed.append(index)
            }
        }
        #expect(closed.count == 1)
        let held = three.indices.filter { !closed.contains($0) }.map { three[$0] }
        if let refusedIndex = closed.first {
            #expect(throws: (any Error).self) { try three[refusedIndex].readResponse() }
        }
        let refused = try await pythonTLS("get", port, authority.certificate, "localhost", "/health")
        #expect(refused["error"] != nil)
        for connection in held { connection.hangUp() }
        #expect(
            await eventually {
                (try? await pythonTLS("get", port, authority.certificate, "localhost", "/health"))?["status"]
                    as? Int == 200
            })
        await server.stop()
    }

    @Test("garbage or plain HTTP instead of a handshake is closed, and logged once a minute at most")
    func garbageHandshakes() async throws {
        let authority = try await TestCertificateAuthority()
        let dataDirectory = TestServer.makeTemporaryDirectory()
        let server = try tests.serveTLS(try await authority.issue("server"), dataDirectory: dataDirectory)
        for _ in 0..<3 {
            let garbage = try RawConnection(port: server.port)
            garbage.send([UInt8](repeating: 0xde, count: 512))
            #expect(await garbage.closed(within: 10))
        }
        let plain = try RawConnection(port: server.port)
        plain.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(await plain.closed(within: 10))
        let health = try await pythonTLS(
            "get", String(server.port), authority.certificate, "localhost", "/health")
        #expect(health["status"] as? Int == 200)
        #expect(try await server.stop(signal: SIGTERM) == 0)
        let failures = try String(contentsOfFile: dataDirectory + ".log", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("roost: TLS handshake with 127.0.0.1 failed: ") }
        #expect(failures.count == 1)
    }
}
