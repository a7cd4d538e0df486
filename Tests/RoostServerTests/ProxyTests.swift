import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostTestSupport
import Testing

/// `--trusted-proxies`: forwarding headers are believed from trusted peers only, walked from the
/// right, and the client they name is what the login throttle, idempotency keys and the access log
/// use. The tests' client connects from 127.0.0.1, which plays the proxy.
@Suite struct ProxyTests {
    // MARK: - The list

    @Test func parsesIPv4AndIPv6RangesAndSingleHosts() throws {
        let proxies = try TrustedProxies("10.0.0.0/8, 192.0.2.1,2001:db8::/32,::1")
        #expect(proxies.contains("10.200.3.4"))
        #expect(!proxies.contains("11.0.0.1"))
        #expect(proxies.contains("192.0.2.1"))
        #expect(!proxies.contains("192.0.2.2"))
        #expect(proxies.contains("2001:db8:ffff::7"))
        #expect(!proxies.contains("2001:db9::1"))
        #expect(proxies.contains("::1"))
        // An IPv4 peer written as IPv4-mapped IPv6 (a dual-stack socket) is the same address.
        #expect(proxies.contains("::ffff:10.1.2.3"))
        #expect(!TrustedProxies().contains("127.0.0.1"))
    }

    @Test(arguments: [
        (
            "10.0.0.0/33",
            "--trusted-proxies: '10.0.0.0/33' has a bad prefix length; an IPv4 range takes 0 to 32"
        ),
        (
            "fd00::/129",
            "--trusted-proxies: 'fd00::/129' has a bad prefix length; an IPv6 range takes 0 to 128"
        ),
        (
            "10.0.0.0/8,300.1.1.1",
            "--trusted-proxies: '300.1.1.1' is not an IP address or CIDR range such as 10.0.0.0/8 or fd00::/8"
        ),
        (
            "proxy.example.com",
            "--trusted-proxies: 'proxy.example.com' is not an IP address or CIDR range such as 10.0.0.0/8 or fd00::/8"
        ),
        (
            "10.1.2.3/8",
            "--trusted-proxies: '10.1.2.3/8' has bits set past its prefix; write the network address, e.g. 10.0.0.0/8"
        ),
        (
            "10.0.0.0/-1",
            "--trusted-proxies: '10.0.0.0/-1' has a bad prefix length; an IPv4 range takes 0 to 32"
        ),
    ])
    func refusesMalformedRanges(list: String, message: String) {
        #expect(throws: TrustedProxiesError(message: message)) { try TrustedProxies(list) }
    }

    @Test func aListHoldsAtMost256Ranges() throws {
        let ranges = (0..<257).map { "10.0.\($0 / 256).\($0 % 256)" }
        #expect(throws: TrustedProxiesError(message: "--trusted-proxies takes at most 256 ranges, not 257")) {
            try TrustedProxies(ranges.joined(separator: ","))
        }
        #expect(try TrustedProxies(ranges.dropLast().joined(separator: ",")).contains("10.0.0.255"))
    }

    @Test func theFlagRefusesABadRangeWithTheSameMessage() async throws {
        let result = try await runRoost(["serve", "--trusted-proxies", "10.0.0.0/33", "--port", "0"])
        #expect(result.status == 64)
        #expect(
            result.errorOutput.contains("'10.0.0.0/33' has a bad prefix length; an IPv4 range takes 0 to 32"))
    }

    // MARK: - Which header is believed

    private func client(
        _ peer: String, trusting list: String, reading header: ForwardingHeader = .xForwardedFor,
        _ fields: [(String, String)]
    ) throws -> (address: String, scheme: String?)? {
        try TrustedProxies(list, header: header).forwardedClient(peer: peer, headers: HTTPHeaders(fields))
    }

    /// nginx and Caddy pass a client's own `Forwarded` through untouched and write
    /// `X-Forwarded-For`: by default `Forwarded` is never believed, even from a trusted proxy, and
    /// a client that sends one is the address the proxy appended.
    @Test func byDefaultAClientsOwnForwardedIsIgnored() throws {
        let trusted = "10.0.0.0/8"
        #expect(try client("10.0.0.1", trusting: trusted, [("Forwarded", "for=198.51.100.1")]) == nil)
        #expect(
            try client(
                "10.0.0.1", trusting: trusted,
                [("Forwarded", "for=198.51.100.7;proto=https"), ("X-Forwarded-For", "203.0.113.1")])! == (
                    "203.0.113.1", nil
                ))
        // Told that the proxy writes Forwarded, X-Forwarded-For and -Proto are ignored instead.
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, reading: .forwarded,
                [("X-Forwarded-For", "203.0.113.1"), ("X-Forwarded-Proto", "https")]) == nil)
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, reading: .forwarded,
                [("X-Forwarded-For", "203.0.113.1"), ("Forwarded", "for=198.51.100.1")])?.address
                == "198.51.100.1")
    }

    @Test func anUntrustedPeerIsNeverBelieved() throws {
        #expect(
            try client("203.0.113.9", trusting: "10.0.0.0/8", [("X-Forwarded-For", "198.51.100.1")]) == nil)
        #expect(try client("203.0.113.9", trusting: "", [("Forwarded", "for=198.51.100.1")]) == nil)
    }

    @Test func xForwardedForIsWalkedFromTheRight() throws {
        let trusted = "10.0.0.0/8"
        // One proxy.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "198.51.100.1")])?.address
                == "198.51.100.1")
        // The client put a fake address on the left; the proxy appended the real one.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "1.2.3.4, 198.51.100.1")])?.address
                == "198.51.100.1")
        // Two trusted hops: the right-most address that is not a proxy.
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, [("X-Forwarded-For", "1.2.3.4, 198.51.100.1, 10.0.0.7")])?
                .address == "198.51.100.1")
        // Split over two header fields, in order.
        #expect(
            try client(
                "10.0.0.1", trusting: trusted,
                [("X-Forwarded-For", "1.2.3.4"), ("x-forwarded-for", "198.51.100.1, 10.0.0.7")])?.address
                == "198.51.100.1")
        // Only proxies: the left-most.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "10.9.9.9, 10.0.0.7")])?.address
                == "10.9.9.9")
        // IPv6, canonicalised so one client is one throttle key.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "2001:DB8:0:0::1")])?.address
                == "2001:db8::1")
    }

    @Test(arguments: [
        "not-an-ip", "1.2.3.4, ", "1.2.3.4 5.6.7.8", "", "1.2.3.4:99999", "[::1",
    ])
    func aMalformedXForwardedForIsIgnored(value: String) throws {
        #expect(try client("10.0.0.1", trusting: "10.0.0.0/8", [("X-Forwarded-For", value)]) == nil)
    }

    /// Junk a client writes on the left never hides the address its proxy appended: the header is
    /// read from the right only as far as the walk needs (a whole header refused for junk made the
    /// client the proxy itself, 127.0.0.1 behind nginx, which `--metrics-allow` may trust).
    @Test func junkOnTheLeftDoesNotHideTheAppendedClient() throws {
        let trusted = "10.0.0.0/8"
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "junk, 198.51.100.1")])?.address
                == "198.51.100.1")
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "1.2.3.4,,198.51.100.1")])?.address
                == "198.51.100.1")
        // Junk next to a trusted hop: the client is not known past that proxy.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("X-Forwarded-For", "junk, 10.0.0.7")])?.address
                == "10.0.0.7")
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, reading: .forwarded,
                [("Forwarded", #"for=junk junk;;, for="[2001:db8::1]";proto=https"#)])! == (
                    "2001:db8::1", "https"
                ))
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, reading: .forwarded,
                [("Forwarded", #"for="a,b", for=198.51.100.9"#)])?.address == "198.51.100.9")
    }

    @Test func forwardedFollowsRFC7239() throws {
        let trusted = "10.0.0.0/8"
        func client(
            _ peer: String, trusting list: String, _ fields: [(String, String)]
        ) throws -> (address: String, scheme: String?)? {
            try self.client(peer, trusting: list, reading: .forwarded, fields)
        }
        #expect(
            try client("10.0.0.1", trusting: trusted, [("Forwarded", "for=198.51.100.1;proto=https")])! == (
                "198.51.100.1", "https"
            ))
        #expect(
            try client(
                "10.0.0.1", trusting: trusted,
                [("Forwarded", #"for="[2001:db8:cafe::17]:4711";proto=http, for=10.0.0.5"#)])! == (
                    "2001:db8:cafe::17", "http"
                ))
        #expect(
            try client(
                "10.0.0.1", trusting: trusted, [("Forwarded", #"for="192.0.2.43:47011", for=10.0.0.5"#)])?
                .address == "192.0.2.43")
        // Case of names and values does not matter; `by` and `host` are ignored.
        #expect(
            try client(
                "10.0.0.1", trusting: trusted,
                [("forwarded", "For=198.51.100.1;By=10.0.0.1;host=example.com")])?
                .address == "198.51.100.1")
        // `unknown` stops the walk at the proxy that wrote it.
        #expect(
            try client("10.0.0.1", trusting: trusted, [("Forwarded", "for=unknown, for=10.0.0.5")])?.address
                == "10.0.0.5")
    }

    @Test(arguments: [
        "for=[2001:db8::1]",  // IPv6 must be quoted
        "for=2001:db8::1",
        #"for="198.51.100.1"#,  // unterminated quote
        "for=198.51.100.1;for=1.2.3.4",  // a parameter twice in one element
        "for",
        "for=198.51.100.1;proto=gopher",
        "for=198.51.100.1 junk",
    ])
    func aMalformedForwardedIsIgnored(value: String) throws {
        #expect(
            try client("10.0.0.1", trusting: "10.0.0.0/8", reading: .forwarded, [("Forwarded", value)]) == nil
        )
        // ... and X-Forwarded-For does not stand in for it.
        #expect(
            try client(
                "10.0.0.1", trusting: "10.0.0.0/8", reading: .forwarded,
                [("Forwarded", value), ("X-Forwarded-For", "203.0.113.1")]) == nil)
    }

    @Test func xForwardedProtoGivesTheScheme() throws {
        let answer = try client(
            "10.0.0.1", trusting: "10.0.0.0/8",
            [("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-Proto", "HTTPS")])
        #expect(answer! == ("198.51.100.1", "https"))
        #expect(
            try client("10.0.0.1", trusting: "10.0.0.0/8", [("X-Forwarded-Proto", "ftp")]) == nil)
    }

    // MARK: - What uses the client address

    private func failLogin(_ server: TestServer, from address: String) async throws -> Int {
        try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"mallory","password":"wrong guess"}"#,
            headers: [("X-Forwarded-For", address)]
        ).status
    }

    private func throttledServer(
        trusting list: String?, reading header: ForwardingHeader = .xForwardedFor, log: LogCapture? = nil
    ) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.loginLimits = LoginThrottle.Limits(
                perAccount: 100, perAddress: 3, window: 3_600_000)
            if let list { configuration.trustedProxies = try! TrustedProxies(list, header: header) }
            if let log {
                configuration.accessLog = true
                configuration.accessLogSink = { log.append($0) }
            }
        }
    }

    @Test func withoutTheSettingOneAttackerBehindTheProxyThrottlesEveryone() async throws {
        let server = try await throttledServer(trusting: nil)
        defer { Task { await server.stop() } }
        #expect(try await server.client.register("alice").status == 201)
        for _ in 0..<3 { #expect(try await failLogin(server, from: "203.0.113.66") == 401) }
        // Alice, another client behind the same proxy, is locked out with the attacker.
        let alice = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#,
            headers: [("X-Forwarded-For", "198.51.100.20")])
        #expect(alice.status == 429)
        #expect(alice.json["code"] as? String == "too_many_attempts")
    }

    @Test func withTheSettingOnlyTheAttackersAddressIsThrottled() async throws {
        let server = try await throttledServer(trusting: "127.0.0.1/32")
        defer { Task { await server.stop() } }
        #expect(try await server.client.register("alice").status == 201)
        for _ in 0..<3 { #expect(try await failLogin(server, from: "203.0.113.66") == 401) }
        #expect(try await failLogin(server, from: "203.0.113.66") == 429)
        let alice = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#,
            headers: [("X-Forwarded-For", "198.51.100.20")])
        #expect(alice.status == 200)
        // The attacker cannot escape by putting another address on the left: the proxy appends.
        #expect(try await failLogin(server, from: "198.51.100.20, 203.0.113.66") == 429)
    }

    @Test(arguments: [("127.0.0.1/32", "198.51.100.20"), ("10.0.0.0/8", "127.0.0.1")])
    func sessionsRecordTheClientAddress(trusting: String, recorded: String) async throws {
        let server = try await throttledServer(trusting: trusting)
        defer { Task { await server.stop() } }
        #expect(try await server.client.register("alice").status == 201)
        let login = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse","deviceId":"phone"}"#,
            headers: [("X-Forwarded-For", "198.51.100.20")])
        let token = try #require(login.json["token"] as? String)
        // The same list /ff/admin/sessions gives an administrator.
        let sessions = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", token)])
        let items = try #require(sessions.json["items"] as? [[String: Any]])
        let phone = try #require(items.first { $0["deviceId"] as? String == "phone" })
        #expect(phone["clientAddress"] as? String == recorded)
        // Registration issued a session too, from the proxy's own address.
        #expect(
            items.contains {
                $0["deviceId"] as? String != "phone" && $0["clientAddress"] as? String == "127.0.0.1"
            })
    }

    @Test func aSpoofedHeaderFromAnUntrustedPeerIsIgnored() async throws {
        let log = LogCapture()
        // Only 10.0.0.0/8 is trusted; the test client (127.0.0.1) is not a proxy.
        let server = try await throttledServer(trusting: "10.0.0.0/8", log: log)
        defer { Task { await server.stop() } }
        for index in 0..<3 { #expect(try await failLogin(server, from: "203.0.113.\(index)") == 401) }
        // Rotating the header did not give the attacker new addresses.
        #expect(try await failLogin(server, from: "203.0.113.99") == 429)
        #expect(
            await eventually {
                log.text.split(separator: "\n").filter {
                    $0.contains(" 127.0.0.1 ") && $0.contains("/ff/login")
                }
                .count == 4
            })
        #expect(!log.text.contains("203.0.113."))
    }

    @Test func theAccessLogShowsTheForwardedClient() async throws {
        let log = LogCapture()
        let server = try await throttledServer(trusting: "127.0.0.1", reading: .forwarded, log: log)
        defer { Task { await server.stop() } }
        _ = try await server.client.send(
            "GET", "/health", headers: [("Forwarded", #"for="[2001:db8::5]:1234";proto=https"#)])
        #expect(
            await eventually { log.text.contains(" 2001:db8::5 ") && log.text.contains(" GET /health 200 ") })
    }

    @Test func anonymousIdempotencyKeysBelongToTheForwardedClient() async throws {
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.trustedProxies = try! TrustedProxies("127.0.0.1")
        }
        defer { Task { await server.stop() } }
        func create(from address: String, text: String) async throws -> TestResponse {
            try await server.client.send(
                "POST", "/ff/resources/Note", json: #"{"text":"\#(text)"}"#,
                headers: [("Idempotency-Key", "same-key"), ("X-Forwarded-For", address)])
        }
        let first = try await create(from: "198.51.100.1", text: "one")
        let second = try await create(from: "198.51.100.2", text: "two")
        #expect(first.status == 201)
        // Another client behind the same proxy is not answered with the first one's response.
        #expect(second.status == 201)
        #expect(second.header("Idempotent-Replayed") == nil)
        #expect(second.json["text"] as? String == "two")
        let replay = try await create(from: "198.51.100.1", text: "one")
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(replay.json["guid"] as? String == first.json["guid"] as? String)
    }

    @Test(arguments: [true, false])
    func theUploadCapPerClientCountsForwardedClients(trusting: Bool) async throws {
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.maxUploadsPerClient = 1
            // The uploads wait while the test opens the others: on a loaded machine that took
            // over 30 s, and the read timeout (the upload's minimum rate starts after it) answered
            // 408 instead of the slot counting this test is about.
            configuration.readTimeout = 600
            if trusting { configuration.trustedProxies = try! TrustedProxies("127.0.0.1") }
        }
        defer { Task { await server.stop() } }
        let created = try await server.client.send("POST", "/ff/resources/A", json: "{}")
        let object = "/ff/resources/A/\(try #require(created.json["guid"] as? String))"
        func upload(_ member: String, from address: String) -> String {
            "PUT \(object)/\(member) HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nX-Forwarded-For: \(address)\r\nContent-Length: 10\r\n\r\n"
        }
        let first = try RawConnection(port: server.port)
        first.send(upload("one", from: "198.51.100.1"))
        #expect(try await first.response(head: true).status == 100)
        let second = try RawConnection(port: server.port)
        second.send(upload("two", from: "198.51.100.2"))
        let secondAnswer = try await second.response(head: true)
        if trusting {
            // Another client behind the same proxy has a slot of its own; the same one does not.
            #expect(secondAnswer.status == 100)
            let third = try RawConnection(port: server.port)
            third.send(upload("three", from: "198.51.100.1"))
            let refused = try await third.response()
            #expect(refused.status == 503)
            #expect(refused.json["code"] as? String == "server_busy")
            second.send("0123456789")
            #expect(try await second.response().status == 200)
        } else {
            // Every client behind the proxy shares the proxy's one slot.
            #expect(secondAnswer.status == 503)
        }
        first.send("0123456789")
        #expect(try await first.response().status == 200)
        // The slot is free again once the body is in.
        let again = try await server.client.send(
            "PUT", "\(object)/four", headers: [("X-Forwarded-For", "198.51.100.1")],
            body: Array("0123456789".utf8))
        #expect(again.status == 200)
    }
}
