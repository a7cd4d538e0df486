import Testing

@testable import RoostHTTP

@Suite("HTTP request parser")
struct RequestParserTests {
    func parse(_ text: String, limits: RequestLimits = RequestLimits()) -> RequestParser.Event {
        var parser = RequestParser(limits: limits)
        parser.append(Array(text.utf8))
        return parser.next()
    }

    @Test("a simple GET")
    func simpleGet() throws {
        guard case .request(let head, let body) = parse("GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-Y:  z \r\n\r\n")
        else {
            Issue.record("expected a request")
            return
        }
        #expect(head.method == "GET")
        #expect(head.target == "/a?b=c")
        #expect(head.keepAlive)
        #expect(
            head.headers == [
                HTTPHeaderField(name: "Host", value: "x"), HTTPHeaderField(name: "X-Y", value: "z"),
            ])
        #expect(body.isEmpty)
    }

    @Test("a body split across many reads")
    func bodyInPieces() {
        var parser = RequestParser(limits: RequestLimits())
        let text = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"
        var events: [RequestParser.Event] = []
        for byte in text.utf8 {
            parser.append([byte])
            events.append(parser.next())
        }
        guard case .request(_, let body) = events.last else {
            Issue.record("expected a request at the end")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "hello world")
        #expect(events.dropLast().allSatisfy { $0 == .needMore(sendContinue: false) })
    }

    @Test("chunked bodies are decoded")
    func chunked() {
        let event = parse(
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: y\r\n\r\n"
        )
        guard case .request(_, let body) = event else {
            Issue.record("expected a request, got \(event)")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "hello world")
    }

    @Test("pipelined requests come out one at a time")
    func pipelined() {
        var parser = RequestParser(limits: RequestLimits())
        parser.append(Array("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .request(let first, _) = parser.next(), case .request(let second, _) = parser.next() else {
            Issue.record("expected two requests")
            return
        }
        #expect(first.target == "/1")
        #expect(second.target == "/2")
        #expect(parser.next() == .needMore(sendContinue: false))
        #expect(parser.isIdle)
    }

    @Test("Expect: 100-continue asks for an interim response once")
    func expectContinue() {
        var parser = RequestParser(limits: RequestLimits())
        parser.append(
            Array("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(parser.next() == .needMore(sendContinue: true))
        parser.append(Array("a".utf8))
        #expect(parser.next() == .needMore(sendContinue: false))
    }

    @Test("HTTP/1.0 closes unless asked to keep alive")
    func http10() {
        guard case .request(let head, _) = parse("GET / HTTP/1.0\r\n\r\n") else {
            Issue.record("expected a request")
            return
        }
        #expect(!head.keepAlive)
        guard case .request(let kept, _) = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") else {
            Issue.record("expected a request")
            return
        }
        #expect(kept.keepAlive)
    }

    @Test(
        "malformed and oversized requests are refused with the right status",
        arguments: [
            ("GET /\r\nHost: x\r\n\r\n", 400, "invalid_request"),
            ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
            ("GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_request"),
            ("GET / HTTP/1.1\r\n\r\n", 400, "invalid_request"),
            ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "invalid_request"),
            ("GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, "invalid_request"),
            ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, "invalid_request"),
            (
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400,
                "invalid_request"
            ),
            (
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                "invalid_request"
            ),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "not_implemented"),
            ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", 413, "body_too_large"),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n80\r\n", 413, "body_too_large"),
            (
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400,
                "invalid_request"
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 300) + "\r\n\r\n", 431,
                "headers_too_large"
            ),
        ])
    func refused(_ text: String, status: Int, code: String) {
        let limits = RequestLimits(maxHeaderBytes: 256, maxHeaderCount: 10, maxBodyBytes: 100)
        guard case .failure(let error) = parse(text, limits: limits) else {
            Issue.record("expected a failure for \(text.debugDescription)")
            return
        }
        #expect(error.status == status)
        #expect(error.code.rawValue == code)
    }

    @Test("too many header fields are refused")
    func tooManyHeaders() {
        let limits = RequestLimits(maxHeaderBytes: 10_000, maxHeaderCount: 3, maxBodyBytes: 100)
        let text = "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"
        #expect(
            parse(text, limits: limits)
                == .failure(
                    HTTPProtocolError(
                        status: 431, code: "headers_too_large",
                        message: "The request has more than 3 header fields.")))
    }

    @Test("headers that never end are refused once over the limit")
    func endlessHeaders() {
        var parser = RequestParser(
            limits: RequestLimits(maxHeaderBytes: 64, maxHeaderCount: 10, maxBodyBytes: 100))
        parser.append(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8))
        #expect(parser.next() == .needMore(sendContinue: false))
        parser.append(Array(String(repeating: "X-Long: y\r\n", count: 10).utf8))
        guard case .failure(let error) = parser.next() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.status == 431)
    }

    @Test("percent-decoding refuses broken escapes and invalid UTF-8")
    func percentDecoding() {
        #expect(PercentEncoding.decode("a%20b") == "a b")
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%ff") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
    }

    @Test("access log redacts secret-looking query values")
    func redaction() {
        #expect(
            AccessLog.redacted("/a?token=abc&x=1&Password=p") == "/a?token=REDACTED&x=1&Password=REDACTED")
        #expect(AccessLog.redacted("/plain") == "/plain")
    }

    @Test(
        "access log decodes names before matching and redacts every secret-looking one",
        arguments: [
            ("/a?%74oken=abc", "/a?%74oken=REDACTED"),
            ("/a?%54OKEN=abc&x=1", "/a?%54OKEN=REDACTED&x=1"),
            ("/a?pass=hunter2", "/a?pass=REDACTED"),
            ("/a?passwd=hunter2", "/a?passwd=REDACTED"),
            ("/a?pwd=hunter2", "/a?pwd=REDACTED"),
            ("/a?sessionid=s1", "/a?sessionid=REDACTED"),
            ("/a?PHPSESSID=s1", "/a?PHPSESSID=REDACTED"),
            ("/a?session=s1", "/a?session=REDACTED"),
            ("/a?client_secret=s", "/a?client_secret=REDACTED"),
            ("/a?Authorization=s", "/a?Authorization=REDACTED"),
            ("/a?api_key=s&apiKey=t", "/a?api_key=REDACTED&apiKey=REDACTED"),
            (
                "/a?X-Amz-Signature=s&X-Amz-Credential=c",
                "/a?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"
            ),
            ("/a?access+token=s", "/a?access+token=REDACTED"),
            ("/a?to%6Ben=s", "/a?to%6Ben=REDACTED"),
            ("/a?%zz=s&count=5&q=token", "/a?%zz=s&count=5&q=token"),
            ("/a?count=5&start=0", "/a?count=5&start=0"),
            ("/a?token", "/a?token"),
        ])
    func redactionDecodes(target: String, logged: String) {
        #expect(AccessLog.redacted(target) == logged)
    }
}
