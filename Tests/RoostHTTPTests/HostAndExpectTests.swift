import RoostTestSupport
import Testing

@testable import RoostHTTP

/// Issue 24, item 17: RFC 9112 section 3.2 (exactly one valid `Host`) and RFC 9110 section 10.1.1
/// (an expectation other than `100-continue` is 417), and their siblings in the head's framing.
@Suite("HTTP Host and Expect")
struct HostAndExpectTests {
    func parse(_ text: String) -> RequestParser.Event {
        var parser = RequestParser(limits: RequestLimits())
        parser.append(Array(text.utf8))
        return parser.next()
    }

    func refusal(_ text: String) -> HTTPProtocolError? {
        guard case .failure(let error) = parse(text) else { return nil }
        return error
    }

    @Test(
        "two Host fields, a list, an empty or malformed Host are 400 invalid_host",
        arguments: [
            "Host: a.com\r\nHost: b.com\r\n",
            "Host: a.com\r\nhost: a.com\r\n",
            "Host: a.com, b.com\r\n",
            "Host: a.com,b.com\r\n",
            "Host:\r\n",
            "Host:   \r\n",
            "Host: a b\r\n",
            "Host: a.com/x\r\n",
            "Host: user@a.com\r\n",
            "Host: a.com\t:80\r\n",
            "Host: caf\u{e9}.com\r\n",
            "Host: a\"b\r\n",
            "Host: a.com:x\r\n",
            "Host: a.com:80:90\r\n",
            "Host: a.com:1234567\r\n",
            "Host: :80\r\n",
            "Host: [::1\r\n",
            "Host: [::1]x\r\n",
            "Host: []\r\n",
            "Host: [::g]\r\n",
        ])
    func badHost(fields: String) {
        let error = refusal("GET / HTTP/1.1\r\n\(fields)\r\n")
        #expect(error?.status == 400, "\(fields.debugDescription)")
        #expect(error?.code == "invalid_host", "\(fields.debugDescription)")
    }

    @Test("HTTP/1.0 needs no Host, but one it sends is checked the same way")
    func http10Host() {
        guard case .request = parse("GET / HTTP/1.0\r\n\r\n") else {
            Issue.record("HTTP/1.0 without Host was refused")
            return
        }
        #expect(refusal("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n")?.code == "invalid_host")
        #expect(refusal("GET / HTTP/1.0\r\nHost: a, b\r\n\r\n")?.code == "invalid_host")
    }

    @Test(
        "a Host the grammar allows is accepted",
        arguments: [
            "localhost", "localhost:8080", "api.example.com", "127.0.0.1:80", "[::1]", "[2001:db8::1]:443",
            "x_y.com", "A.COM", "a.com:", "[::ffff:192.0.2.1]:80",
        ])
    func goodHost(host: String) {
        guard case .request(let head, _) = parse("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n") else {
            Issue.record("\(host) was refused")
            return
        }
        #expect(head.headers == [HTTPHeaderField(name: "Host", value: host)])
    }

    @Test(
        "an expectation other than 100-continue is 417 expectation_failed",
        arguments: [
            "Expect: 200-ok\r\n", "Expect: 100-continue, 200-ok\r\n", "Expect: 100-continue\r\nExpect: x\r\n",
            "Expect: 100-continue; a=b\r\n", "Expect: 100\r\n",
        ])
    func unknownExpectation(fields: String) {
        let error = refusal("PUT / HTTP/1.1\r\nHost: x\r\n\(fields)Content-Length: 3\r\n\r\nabc")
        #expect(error?.status == 417, "\(fields.debugDescription)")
        #expect(error?.code == "expectation_failed", "\(fields.debugDescription)")
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")?.code == "expectation_failed")
    }

    @Test("100-continue in any case is accepted; HTTP/1.0 is never sent an interim 100")
    func continueAccepted() {
        var parser = RequestParser(limits: RequestLimits())
        parser.append(
            Array("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(parser.next() == .needMore(sendContinue: true))
        // RFC 9110 section 10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        var old = RequestParser(limits: RequestLimits())
        old.append(Array("PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(old.next() == .needMore(sendContinue: false))
        // An empty list member is no expectation (RFC 9110 section 5.6.1).
        guard case .request = parse("GET / HTTP/1.1\r\nHost: x\r\nExpect:\r\n\r\n") else {
            Issue.record("an empty Expect was refused")
            return
        }
    }

    @Test(
        "framing siblings stay refused: conflicting or listed lengths, both framings, repeated chunked",
        arguments: [
            ("Content-Length: 3\r\nContent-Length: 4\r\n", 400, "invalid_request"),
            ("Content-Length: 3, 3\r\n", 400, "invalid_request"),
            ("Content-Length: 3, 4\r\n", 400, "invalid_request"),
            ("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", 400, "invalid_request"),
            ("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", 400, "invalid_request"),
            ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400, "invalid_request"),
            ("Transfer-Encoding: gzip, chunked\r\n", 501, "not_implemented"),
            ("Content-Length: +3\r\n", 400, "invalid_request"),
        ])
    func framingSiblings(fields: String, status: Int, code: String) {
        let error = refusal("POST / HTTP/1.1\r\nHost: x\r\n\(fields)\r\nabc")
        #expect(error?.status == status, "\(fields.debugDescription)")
        #expect(error?.code.rawValue == code, "\(fields.debugDescription)")
    }

    @Test("over a socket: 400 invalid_host and 417 expectation_failed with their status lines, then close")
    func overTheWire() async throws {
        let server = try makeServer()
        for (request, status, line, code) in [
            ("GET /hello/a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Bad Request", "invalid_host"),
            (
                "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 3\r\n\r\nabc", 417,
                "Expectation Failed", "expectation_failed"
            ),
        ] {
            let connection = try RawConnection(port: server.port)
            connection.send(request)
            let answer = try await offCooperativePool {
                var bytes: [UInt8] = []
                while let chunk = try connection.receiveChunk() { bytes += chunk }
                return String(decoding: bytes, as: UTF8.self)
            }
            // Read to the end: the server closed after answering.
            #expect(answer.hasPrefix("HTTP/1.1 \(status) \(line)\r\n"), "\(answer)")
            #expect(answer.contains("\"code\":\"\(code)\""), "\(answer)")
        }
        await server.shutdown()
    }
}
