import Foundation
import RoostTestSupport
import Testing

/// Issue 12's findings as an attacker with a socket would try them, against the real binary
/// (and, where it needs accounts, an in-process server).
@Suite("Hostile HTTP clients", .serialized)
struct HostileHTTPTests {
    /// A server with open rules and an object to upload to; returns its data folder and object path.
    func start(_ arguments: [String] = [], launcher: [String] = []) async throws -> (
        server: RoostProcess, directory: String, object: String
    ) {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: ["--app", try writeOpenDefinition(beside: directory)] + arguments, launcher: launcher)
        let created = try await TestHTTPClient(port: server.port).send("POST", "/ff/resources/A", json: "{}")
        let guid = try #require(created.json["guid"] as? String)
        return (server, directory, "/ff/resources/A/\(guid)")
    }

    func temporaryFiles(_ directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory + "/blobs/tmp")) ?? []
    }

    func kilobytes(_ field: String, of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestClientError(description: "no \(field) in /proc/\(pid)/status") }
        return value
    }

    /// Sends raw bytes on a new connection and reads one response.
    func exchange(_ port: Int, _ text: String) async throws -> TestResponse {
        try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(text)
            return try connection.readResponse()
        }
    }

    @Test("the crash inputs of the report get 400 or a clamped range, and the server lives on")
    func crashInputs() async throws {
        let (server, directory, object) = try await start()
        let port = server.port
        let chunked = "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for size in ["-1", "+5", "-0", " 5", "5\n", "FFFFFFFFFFFFFFFFF"] {
            let health = try await exchange(
                port, "GET /health HTTP/1.1\r\n" + chunked + size + "\r\nhello\r\n")
            #expect(health.status == 400, "\(size.debugDescription)")
            #expect(health.json["code"] as? String == "invalid_request")
            let upload = try await exchange(
                port,
                "PUT \(object)/file HTTP/1.1\r\n" + chunked + "5\r\nhello\r\n" + size + "\r\nmore bytes\r\n")
            #expect(upload.status == 400, "\(size.debugDescription)")
            #expect(upload.json["code"] as? String == "invalid_request")
        }
        #expect(await eventually { temporaryFiles(directory).isEmpty })

        let client = TestHTTPClient(port: port)
        let bytes = Array("0123456789".utf8)
        #expect(try await client.send("PUT", "\(object)/file", body: bytes).status == 200)
        for header in [
            "bytes=0-9223372036854775807", "bytes=0-99999999999999999999999", "bytes=-9223372036854775807",
        ] {
            let part = try await client.send("GET", "\(object)/file", headers: [("Range", header)])
            #expect(part.status == 206, "\(header)")
            #expect(part.body == bytes)
            #expect(part.header("Content-Range") == "bytes 0-9/10")
        }
        for header in ["bytes=9223372036854775807-", "bytes=-0"] {
            let refused = try await client.send("GET", "\(object)/file", headers: [("Range", header)])
            #expect(refused.status == 416, "\(header)")
            #expect(refused.json["code"] as? String == "range_not_satisfiable")
        }
        // Query numbers are digits, with a '-' the services then refuse, and never overflow.
        for query in [
            "count=%2B5", "count=+5", "count=%205", "start=99999999999999999999",
            "start=-9223372036854775809",
            "count=0x10", "depthRef=%2B1",
        ] {
            let refused = try await client.send("GET", "/ff/resources/A?\(query)")
            #expect(refused.status == 400, "\(query)")
            #expect(refused.json["code"] as? String == "invalid_parameter")
        }
        #expect(try await client.send("GET", "/ff/resources/A?count=5&start=0").status == 200)
        #expect(try await client.send("GET", "/health").status == 200)
        #expect(server.process.isRunning)
        try await server.stop(signal: SIGTERM)
    }

    @Test("an anonymous upload to a missing object is refused at its head: no 100 Continue, no byte on disk")
    func uploadRefusedBeforeItsBody() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        // The default rules: anonymous callers may not write.
        let server = try RoostProcess(dataDirectory: directory)
        let port = server.port
        let path = "/ff/resources/Nope/doesnotexist/data"
        let waiting = try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(
                "PUT \(path) HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 52428800\r\n\r\n")
            return try connection.readResponse()
        }
        #expect(waiting.status == 404)
        #expect(waiting.json["code"] as? String == "not_found")
        #expect(waiting.header("Connection") == "close")
        // A client that does not wait for 100 Continue: answered all the same, its bytes never stored.
        let eager = try await offCooperativePool { () throws -> (TestResponse, Bool) in
            let connection = try RawConnection(port: port)
            connection.send("PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n")
            connection.send([UInt8](repeating: 7, count: 1 << 20))
            let response = try connection.readResponse()
            return (response, connection.waitForClose(timeout: 5))
        }
        #expect(eager.0.status == 404)
        #expect(eager.1)
        #expect(temporaryFiles(directory).isEmpty)
        // An object that exists but that an anonymous caller may not update: 401 at the head.
        #expect(try await TestHTTPClient(port: port).send("GET", "/health").status == 200)
        try await server.stop(signal: SIGTERM)
    }

    @Test("an upload's head is judged like its write: 401, 403, 412 before 100 Continue; the owner gets it")
    func uploadRightsAtTheHead() async throws {
        let server = try await makeAccountServer()
        let client = server.client
        _ = try await client.register("alice")
        _ = try await client.register("bob")
        let alice = try await client.login("alice")
        let bob = try await client.login("bob")
        let created = try await client.send(
            "POST", "/ff/resources/Photo", json: "{}", headers: [("Authorization", "Bearer \(alice)")])
        let guid = try #require(created.json["guid"] as? String)
        let path = "/ff/resources/Photo/\(guid)/image"
        let port = server.port
        func head(_ extra: String) async throws -> TestResponse {
            try await offCooperativePool {
                let connection = try RawConnection(port: port)
                connection.send(
                    "PUT \(path) HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\(extra)\r\n"
                )
                return try connection.readResponse()
            }
        }
        let anonymous = try await head("")
        #expect(anonymous.status == 401)
        #expect(anonymous.json["code"] as? String == "login_required")
        let stranger = try await head("Authorization: Bearer \(bob)\r\n")
        #expect(stranger.status == 403)
        #expect(stranger.json["code"] as? String == "forbidden")
        let badToken = try await head("Authorization: Bearer nope\r\n")
        #expect(badToken.status == 401)
        #expect(badToken.json["code"] as? String == "invalid_token")
        let stale = try await head("Authorization: Bearer \(alice)\r\nIf-Match: \"7\"\r\n")
        #expect(stale.status == 412)
        #expect(stale.json["code"] as? String == "version_mismatch")
        let badMember = try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(
                "PUT /ff/resources/Photo/\(guid)/9bad HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nAuthorization: Bearer \(alice)\r\nContent-Length: 5\r\n\r\n"
            )
            return try connection.readResponse()
        }
        #expect(badMember.status == 400)
        let owner = try await head("Authorization: Bearer \(alice)\r\n")
        #expect(owner.status == 100)
        // A resend under an Idempotency-Key whose first try went through gets its recorded answer,
        // though its If-Match is stale by then.
        let key = [
            ("Authorization", "Bearer \(alice)"), ("Idempotency-Key", "upload-1"), ("If-Match", "\"1\""),
        ]
        let first = try await client.send("PUT", path, headers: key, body: Array("bytes".utf8))
        #expect(first.status == 200)
        let resent = try await client.send("PUT", path, headers: key, body: Array("bytes".utf8))
        #expect(resent.status == 200)
        #expect(resent.body == first.body)
        await server.stop()
    }

    @Test(
        "uploads in flight are capped per client and in all, with 503 server_busy and Retry-After",
        arguments: [
            ["--max-uploads-per-client", "1"], ["--max-uploads", "1", "--max-uploads-per-client", "8"],
        ])
    func uploadSlots(flags: [String]) async throws {
        let (server, directory, object) = try await start(flags)
        let port = server.port
        let first = try RawConnection(port: port)
        first.send(
            "PUT \(object)/one HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")
        #expect(try await first.response(head: true).status == 100)
        let second = try await exchange(
            port, "PUT \(object)/two HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
        #expect(second.status == 503)
        #expect(second.json["code"] as? String == "server_busy")
        #expect(second.header("Retry-After") == "5")
        first.send("0123456789")
        #expect(try await first.response().status == 200)
        // The slot is free again once the first upload's body is in.
        let third = try await TestHTTPClient(port: port).send(
            "PUT", "\(object)/three", body: Array("0123456789".utf8))
        #expect(third.status == 200)
        #expect(temporaryFiles(directory).isEmpty)
        try await server.stop(signal: SIGTERM)
    }

    @Test("an upload trickling below the minimum rate is cut off with 408 and its file removed")
    func slowUpload() async throws {
        let (server, directory, object) = try await start([
            "--read-timeout", "2", "--min-upload-rate", "100000",
        ])
        let port = server.port
        let response = try await offCooperativePool { () throws -> TestResponse? in
            let connection = try RawConnection(port: port, timeout: 0.5)
            connection.send("PUT \(object)/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
            // A byte every half second resets a per-read timeout forever, but falls below the rate.
            for _ in 0..<20 {
                connection.send("x")
                if let response = try? connection.readResponse() { return response }
            }
            return nil
        }
        let answer = try #require(response)
        #expect(answer.status == 408)
        #expect(answer.json["code"] as? String == "request_timeout")
        #expect(await eventually { temporaryFiles(directory).isEmpty })
        try await server.stop(signal: SIGTERM)
    }

    /// A gauge's value in `/metrics` (the servers here allow loopback to read it).
    func gauge(_ name: String, port: Int) async -> Int? {
        guard let answer = try? await TestHTTPClient(port: port).send("GET", "/metrics") else { return nil }
        let line = answer.text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test("a client pipelining large pages without reading them leaves the server's memory flat")
    func pipeliningBackPressure() async throws {
        let (server, _, _) = try await start(["--metrics-allow", "127.0.0.1"])
        let port = server.port
        let client = TestHTTPClient(port: port)
        let payload = String(repeating: "p", count: 2000)
        for _ in 0..<200 {
            #expect(
                try await client.send("POST", "/ff/resources/Big", json: #"{"p":"\#(payload)"}"#).status
                    == 201)
        }
        let page = try await client.send("GET", "/ff/resources/Big?count=1000")
        #expect(page.status == 200)
        let pageBytes = page.body.count
        let pid = server.process.pid
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let before = try kilobytes("VmRSS", of: pid)
        let requests = 600
        let connection = try RawConnection(port: port, timeout: 60)
        let request = "GET /ff/resources/Big?count=1000 HTTP/1.1\r\nHost: x\r\n\r\n"
        connection.send(String(repeating: request, count: requests))
        // The server stops reading once the unsent answers pass the bound (unbounded, it would
        // answer all 600: 250 MiB); the peak is read once it waits for the client.
        #expect(await eventually { await gauge("roost_http_connections_awaiting_client", port: port) == 1 })
        let peak = try kilobytes("VmHWM", of: pid)
        print(
            "pipelining: \(requests) pages of \(pageBytes) bytes unread, RSS \(before) kB before, peak \(peak) kB"
        )
        #expect(peak - before < 48 * 1024)
        // Every answer still arrives, in order, once the client reads.
        let received = try await offCooperativePool { () throws -> Int in
            var count = 0
            for _ in 0..<requests where try connection.drainResponse().bodyBytes == pageBytes { count += 1 }
            return count
        }
        #expect(received == requests)
        try await server.stop(signal: SIGTERM)
    }

    @Test("beyond --max-connections a connection gets 503 server_busy, and the server recovers")
    func connectionCap() async throws {
        let (server, _, _) = try await start(["--max-connections", "3"])
        let port = server.port
        var open = try (0..<3).map { _ in try RawConnection(port: port) }
        // Accepting is asynchronous: until the server holds all three, a fourth is served (and
        // says nothing to a client that sends nothing), so try again until it is refused.
        let answer = try await offCooperativePool { () throws -> TestResponse? in
            for _ in 0..<20 {
                let connection = try RawConnection(port: port, timeout: 0.5)
                if let response = try? connection.readResponse() { return response }
            }
            return nil
        }
        let refused = try #require(answer)
        #expect(refused.status == 503)
        #expect(refused.json["code"] as? String == "server_busy")
        #expect(refused.header("Retry-After") == "1")
        open.removeAll()
        #expect(
            await eventually { (try? await TestHTTPClient(port: port).send("GET", "/health").status) == 200 })
        try await server.stop(signal: SIGTERM)
    }

    @Test("at the descriptor limit the server pauses accepting, warns once, and answers again after")
    func descriptorExhaustion() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            print(
                "skipped: descriptor exhaustion needs /usr/bin/prlimit (util-linux) to lower the child's limit"
            )
            return
        }
        let (server, directory, _) = try await start(
            ["--max-connections", "100000"], launcher: ["/usr/bin/prlimit", "--nofile=128:128", "--"])
        let port = server.port
        // More sockets than the server has descriptors; the kernel completes them all in the backlog.
        var sockets = try (0..<300).map { _ in try RawConnection(port: port) }
        // The server warns when accepting first fails; it must still be running after.
        #expect(
            await eventually {
                (try? String(contentsOfFile: directory + ".log", encoding: .utf8))?.contains(
                    "cannot accept connections") == true
            })
        #expect(server.process.isRunning)
        sockets.removeAll()
        #expect(
            await eventually { (try? await TestHTTPClient(port: port).send("GET", "/health").status) == 200 })
        try await server.stop(signal: SIGTERM)
        let log = try String(contentsOfFile: directory + ".log", encoding: .utf8)
        let warnings = log.components(separatedBy: "cannot accept connections").count - 1
        print("descriptor exhaustion: \(warnings) warning(s), \(log.utf8.count) bytes of standard error")
        #expect(warnings == 1)
        #expect(log.utf8.count < 4096)
    }
}
