import Testing

@testable import RoostHTTP

/// Bodies the application asks to stream: parts as they arrive, their own limit, same framing.
@Suite("HTTP request parser, streamed bodies")
struct StreamedBodyParserTests {
    var limits: RequestLimits {
        var limits = RequestLimits(maxBodyBytes: 4)
        limits.streamedBodyLimit = { head in head.target.hasPrefix("/upload") ? 20 : nil }
        return limits
    }

    /// Feeds `text` in pieces of `step` bytes and collects every event up to the request.
    func events(_ text: String, step: Int) -> [RequestParser.Event] {
        var parser = RequestParser(limits: limits)
        var events: [RequestParser.Event] = []
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            parser.append(Array(bytes[offset..<min(offset + step, bytes.count)]))
            offset += step
            while true {
                let event = parser.next()
                if case .needMore = event { break }
                events.append(event)
                if case .request = event { return events }
                if case .failure = event { return events }
            }
        }
        return events
    }

    func body(of events: [RequestParser.Event]) -> [UInt8] {
        events.flatMap { event -> [UInt8] in
            if case .bodyPart(let part) = event { return Array(part) }
            return []
        }
    }

    @Test(arguments: [1, 3, 1000])
    func aFixedLengthBodyArrivesInParts(step: Int) {
        let events = events(
            "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\nhello, world", step: step)
        guard case .streamStart(let head)? = events.first, case .request(_, let buffered)? = events.last
        else {
            Issue.record("expected streamStart ... request, got \(events)")
            return
        }
        #expect(head.target == "/upload")
        #expect(buffered.isEmpty)
        #expect(body(of: events) == Array("hello, world".utf8))
    }

    @Test(arguments: [1, 5, 1000])
    func aChunkedBodyArrivesWithoutItsFraming(step: Int) {
        let text =
            "PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"
        let events = events(text, step: step)
        #expect(body(of: events) == Array("hello, world".utf8))
        guard case .request? = events.last else {
            Issue.record("no request at the end: \(events)")
            return
        }
    }

    @Test func anEmptyStreamedBodyStillStartsAndEnds() {
        let events = events("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", step: 1000)
        #expect(events.count == 2)
        guard case .streamStart? = events.first, case .request? = events.last else {
            Issue.record("expected streamStart then request, got \(events)")
            return
        }
    }

    @Test func theStreamLimitReplacesTheBodyLimit() {
        // 12 bytes: over the buffered limit of 4, under the streamed limit of 20.
        let buffered = events(
            "PUT /other HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\nhello, world", step: 1000)
        guard case .failure(let error)? = buffered.last else {
            Issue.record("a buffered body over its limit was accepted")
            return
        }
        #expect(error.status == 413)
        let tooLong = events("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 21\r\n\r\n", step: 1000)
        guard case .failure(let streamed)? = tooLong.last else {
            Issue.record("a streamed body over its limit was accepted")
            return
        }
        #expect(streamed.message == "The request body exceeds the limit of 20 bytes.")
        let chunks =
            "PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\nb\r\n"
        guard case .failure(let chunked)? = events(chunks, step: 1000).last else {
            Issue.record("chunks over the streamed limit were accepted")
            return
        }
        #expect(chunked.status == 413)
    }
}

/// Which routes stream their bodies is the router's to say, by route.
@Suite("Router: streamed-body routes")
struct StreamingRouteTests {
    let router: Router = {
        var router = Router { _, _ in Response(status: 500) }
        router.on(.put, "/files/:id/acl") { _ in Response(status: 200) }
        router.on(.put, "/files/:id/:member", streamingBody: true) { _ in Response(status: 200) }
        router.on(.post, "/files") { _ in Response(status: 201) }
        return router
    }()

    func head(_ method: String, _ target: String) -> RequestHead {
        RequestHead(method: method, target: target, minorVersion: 1, headers: [], keepAlive: true)
    }

    @Test(arguments: [
        ("PUT", "/files/a/photo", true),
        ("PUT", "/files/a/photo?x=1", true),
        ("PUT", "/files/a/acl", false),
        ("DELETE", "/files/a/photo", false),
        ("POST", "/files", false),
        ("PUT", "/elsewhere", false),
    ])
    func theChosenRouteDecides(method: String, target: String, streams: Bool) {
        #expect((router.route(head(method, target))?.route.streamsBody ?? false) == streams)
    }
}
