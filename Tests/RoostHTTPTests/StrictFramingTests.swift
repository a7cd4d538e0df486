import Testing

@testable import RoostHTTP

/// RFC 9112 framing without leniency: what a smuggler or a crasher sends is refused, whole.
@Suite("HTTP strict framing")
struct StrictFramingTests {
    static let chunkedHead = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

    /// Every event up to a request or failure, feeding `text` in pieces of `step` bytes.
    static func outcome(
        _ text: String, step: Int = 1 << 20, limits: RequestLimits = RequestLimits()
    ) -> RequestParser.Event? {
        var parser = RequestParser(limits: limits)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            parser.append(Array(bytes[offset..<min(offset + step, bytes.count)]))
            offset += step
            while true {
                let event = parser.next()
                switch event {
                case .needMore: break
                case .request, .failure: return event
                case .streamStart, .bodyPart, .bodyStart: continue
                }
                break
            }
        }
        return nil
    }

    @Test(
        "chunk sizes other than 1 to 16 hexadecimal digits are refused with 400 invalid_request",
        arguments: [
            "-1", "+5", " 5", "5 ", "0x5", "", ";ext", "-0", "1_0", "5\t", "١",
            "00000000000000005",  // 17 digits
            "5;a=\"b\nc\"", "5;\u{1}",
        ])
    func badChunkSizes(size: String) {
        for step in [1, 3, 1 << 20] {
            let event = Self.outcome(Self.chunkedHead + size + "\r\nhello\r\n0\r\n\r\n", step: step)
            guard case .failure(let error) = event else {
                Issue.record(
                    "\(size.debugDescription) step \(step): expected a failure, got \(String(describing: event))"
                )
                return
            }
            #expect(error.status == 400)
            #expect(error.code == "invalid_request")
        }
    }

    @Test("on a streamed body a bad chunk size fails at once: no waiting, no bytes kept after it")
    func streamedBadChunk() {
        var limits = RequestLimits()
        limits.streamedBodyLimit = { _ in 1 << 30 }
        var parser = RequestParser(limits: limits)
        parser.append(Array((Self.chunkedHead + "5\r\nhello\r\n-1\r\n").utf8))
        guard case .streamStart = parser.next(), case .bodyPart(let part) = parser.next() else {
            Issue.record("expected the stream to start with its first chunk")
            return
        }
        #expect(Array(part) == Array("hello".utf8))
        guard case .failure(let error) = parser.next() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == "invalid_request")
        // What follows is never taken as body.
        parser.append([UInt8](repeating: 65, count: 4096))
        #expect(parser.next() == .needMore(sendContinue: false))
    }

    @Test("the chunk size of the report (-1) is refused on a buffered body without trapping")
    func negativeChunkSize() {
        let event = Self.outcome(
            "GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n")
        #expect(event == .failure(RequestParser.invalid("A chunk size must start with a hexadecimal digit.")))
    }

    @Test("valid sizes: leading zeros up to 16 digits, upper case, extensions after optional spaces")
    func goodChunkSizes() {
        for size in ["0000000000000005", "5", "5;name=value", "5 ;name", "5\t;n=\"q d\""] {
            let event = Self.outcome(Self.chunkedHead + size + "\r\nhello\r\n0\r\n\r\n")
            guard case .request(_, let body) = event else {
                Issue.record("\(size.debugDescription): expected a request, got \(String(describing: event))")
                continue
            }
            #expect(body == Array("hello".utf8))
        }
        #expect(Self.outcome(Self.chunkedHead + "A\r\n0123456789\r\n0\r\n\r\n") != nil)
    }

    @Test("a 16-digit size beyond Int or the limit is 413, never an overflow")
    func hugeChunkSizes() {
        for size in ["FFFFFFFFFFFFFFFF", "7FFFFFFFFFFFFFFF", "8000000000000000"] {
            let event = Self.outcome(Self.chunkedHead + "1\r\na\r\n" + size + "\r\n")
            guard case .failure(let error) = event else {
                Issue.record("\(size): expected a failure, got \(String(describing: event))")
                continue
            }
            #expect(error.status == 413)
            #expect(error.code == "body_too_large")
        }
    }

    @Test(
        "a bare LF anywhere in the framing is refused",
        arguments: [
            "GET / HTTP/1.1\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX: y\n\n",
            "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
            chunkedHead + "5\nhello\r\n0\r\n\r\n",
            chunkedHead + "5;ext\nhello\r\n0\r\n\r\n",
            chunkedHead + "5\r\nhello\r\n0\r\nTrailer: y\n\r\n",
            chunkedHead + "5\r\nhello\r\n0\r\n\n",
        ])
    func bareLineFeeds(text: String) {
        for step in [1, 1 << 20] {
            let event = Self.outcome(text, step: step)
            guard case .failure(let error) = event else {
                Issue.record("\(text.debugDescription): expected a failure, got \(String(describing: event))")
                return
            }
            #expect(error.status == 400)
            #expect(error.code == "invalid_request")
        }
    }

    @Test("trailers are bounded in bytes and fields, and must be fields")
    func trailerLimits() {
        let limits = RequestLimits(maxHeaderBytes: 256, maxHeaderCount: 4, maxBodyBytes: 100)
        let many = Self.chunkedHead + "0\r\n" + String(repeating: "T: 1\r\n", count: 5) + "\r\n"
        guard case .failure(let tooMany) = Self.outcome(many, limits: limits) else {
            Issue.record("expected a failure for five trailers")
            return
        }
        #expect(tooMany.status == 431)
        let long =
            Self.chunkedHead + "0\r\n" + String(repeating: "T: 1234567890\r\n", count: 3)
            + "T: " + String(repeating: "v", count: 300)
        guard case .failure(let tooLong) = Self.outcome(long, step: 7, limits: limits) else {
            Issue.record("expected a failure for long trailers")
            return
        }
        #expect(tooLong.status == 431)
        #expect(tooLong.code == "headers_too_large")
        for bad in ["no colon", ": empty name", "T: a\u{7F}b", "Bad Name: v"] {
            let event = Self.outcome(Self.chunkedHead + "0\r\n" + bad + "\r\n\r\n", limits: limits)
            guard case .failure(let error) = event else {
                Issue.record("\(bad.debugDescription): expected a failure")
                continue
            }
            #expect(error.status == 400)
        }
        let fine = Self.chunkedHead + "0\r\nT: 1\r\nU: 2\r\n\r\n"
        guard case .request = Self.outcome(fine, limits: limits) else {
            Issue.record("expected two trailers to pass")
            return
        }
    }

    @Test("Content-Length with a sign, a plus, spaces inside or a list is refused")
    func contentLengths() {
        for value in ["+5", "-5", "5 5", "5,5", "0x5", "1e3", "", "٥", "0000000000000005"] {
            let event = Self.outcome("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\nhello")
            guard case .failure(let error) = event else {
                Issue.record(
                    "\(value.debugDescription): expected a failure, got \(String(describing: event))")
                continue
            }
            #expect(error.status == 400)
            #expect(error.code == "invalid_request")
        }
    }

    @Test("HTTP/1.0 with Transfer-Encoding is refused")
    func http10Chunked() {
        let event = Self.outcome("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        guard case .failure(let error) = event else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == "invalid_request")
    }

    @Test("a pipelining client that never lets the buffer empty does not grow it without bound")
    func compaction() {
        var parser = RequestParser(limits: RequestLimits())
        let request = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var pending = request + request.prefix(5)
        var largest = 0
        for _ in 0..<20_000 {
            parser.append(pending)
            while case .request = parser.next() {}
            largest = max(largest, parser.buffer.count)
            pending = Array(request.dropFirst(5)) + request.prefix(5)
        }
        #expect(largest < 2 * RequestParser.compactionThreshold)
    }
}
