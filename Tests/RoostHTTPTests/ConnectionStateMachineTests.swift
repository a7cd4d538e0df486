import Testing

@testable import RoostHTTP

/// The connection's life without sockets: each test feeds events and checks the actions and
/// states that come back, as the wire tests (HTTPServerTests, HostileHTTPTests, TLSTests...)
/// see them through a socket.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    static let second: UInt64 = 1_000_000_000
    static let timeouts = ConnectionStateMachine.Timeouts(
        read: 30, idle: 60, handshake: 10, minimumUploadRate: 1024)

    func machine(secure: Bool = false, limits: RequestLimits = RequestLimits()) -> ConnectionStateMachine {
        ConnectionStateMachine(secure: secure, limits: limits, timeouts: Self.timeouts, now: 0)
    }

    /// Receives `text` at `now` and returns the parse events up to the first wait.
    func receive(_ text: String, into machine: inout ConnectionStateMachine, now: UInt64 = 0)
        -> [ConnectionStateMachine.RequestEvent]
    {
        let taken = Array(text.utf8).withUnsafeBytes { machine.received($0, now: now) }
        guard taken, machine.afterRead() == .parse else { return [] }
        return parse(&machine, now: now)
    }

    func parse(_ machine: inout ConnectionStateMachine, now: UInt64 = 0) -> [ConnectionStateMachine
        .RequestEvent]
    {
        var events: [ConnectionStateMachine.RequestEvent] = []
        while true {
            let event = machine.nextRequestEvent(now: now)
            switch event {
            case .wait: return events
            case .bodyPart: events.append(event)
            default:
                events.append(event)
                return events
            }
        }
    }

    func isDispatch(_ event: ConnectionStateMachine.RequestEvent?, target: String) -> Bool {
        guard case .dispatch(let head, _) = event else { return false }
        return head.target == target
    }

    @Test("a keep-alive request is handled, answered, and the next one read")
    func keepAlive() {
        var machine = machine()
        #expect(machine.isIdle)
        let events = receive("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine, now: Self.second)
        #expect(isDispatch(events.last, target: "/a"))
        #expect(machine.state == .handling(peerClosed: false, readingPaused: false))
        #expect(!machine.isIdle)
        let step1 = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        #expect(step1 == .send(keepAlive: true))
        let step2 = machine.answerSent(keepAlive: true, overBound: false, now: 2 * Self.second)
        #expect(step2 == .next(resumeReading: false))
        #expect(machine.state == .reading)
        #expect(machine.isIdle)
        #expect(machine.waitingSince == 2 * Self.second)
        #expect(machine.firstByteAt == nil)
    }

    @Test("pipelined requests are handled one at a time, in order")
    func pipelining() {
        var machine = machine()
        let events = receive(
            "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        #expect(events.count == 1)
        #expect(isDispatch(events.first, target: "/1"))
        // Parsing waits while the handler runs.
        let step3 = machine.nextRequestEvent(now: 0)
        #expect(step3 == .wait)
        _ = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        // The next request began arriving already: its read timeout runs from now.
        let step4 = machine.answerSent(keepAlive: true, overBound: false, now: 5)
        #expect(step4 == .next(resumeReading: false))
        #expect(machine.firstByteAt == 5)
        #expect(isDispatch(parse(&machine).last, target: "/2"))
    }

    @Test("a client far ahead pauses reading until its handler is done, then resumes")
    func pipelineLimit() {
        var machine = machine()
        _ = receive("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        let ahead = [UInt8](
            repeating: UInt8(ascii: "a"), count: ConnectionStateMachine.pipelineBufferLimit + 1)
        let taken = ahead.withUnsafeBytes { machine.received($0, now: 0) }
        #expect(taken)
        let step5 = machine.afterRead()
        #expect(step5 == .pauseReading)
        _ = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        let step6 = machine.answerSent(keepAlive: true, overBound: false, now: 0)
        #expect(step6 == .next(resumeReading: true))
    }

    @Test("Connection: close, or a handler's own Connection header, closes after the answer")
    func closeAfterAnswer() {
        var machine = machine()
        _ = receive("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", into: &machine)
        let step7 = machine.answerReady(hasStream: false, headOnly: false, keepAlive: false)
        #expect(step7 == .send(keepAlive: false))
        let step8 = machine.answerSent(keepAlive: false, overBound: false, now: 0)
        #expect(step8 == .closeWhenFlushed)
        #expect(machine.state == .closing(.answer))
        let step9 = machine.drained(now: 0)
        #expect(step9 == .close)
        let step10 = machine.close()
        #expect(step10)
        #expect(machine.state == .closed)
    }

    @Test("a client that does not read its answers stops being read until half of them are sent")
    func drainBackpressure() {
        var machine = machine()
        _ = receive("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        _ = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        let step11 = machine.answerSent(keepAlive: true, overBound: true, now: 0)
        #expect(step11 == .waitForDrain)
        let step12 = machine.nextRequestEvent(now: 0)
        #expect(step12 == .wait)
        #expect(machine.deadline(now: 1000 * Self.second) == .none)
        let step13 = machine.drained(now: 0)
        #expect(step13 == .resumeReading)
        #expect(isDispatch(parse(&machine).last, target: "/2"))
    }

    @Test("Expect: 100-continue asks for the continue, then the body is read")
    func expectContinue() {
        var machine = machine()
        let events = receive(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", into: &machine)
        #expect(events == [.sendContinue])
        let body = receive("hello", into: &machine)
        guard case .dispatch(_, let received) = body.last else {
            Issue.record("expected the request")
            return
        }
        #expect(received == Array("hello".utf8))
    }

    @Test("a malformed request fails, is refused, lingers and closes when the linger ends")
    func refusalLingers() {
        var machine = machine()
        let events = receive(
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", into: &machine)
        guard case .fail(let error) = events.last else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.status == 400)
        let step14 = machine.refusing()
        #expect(step14)
        // A second refusal (the same connection's) sends nothing more.
        let step15 = machine.refusing()
        #expect(!step15)
        #expect(machine.state == .closing(.refusal))
        let step16 = machine.heldBytesDelta()
        #expect(step16 == 0)
        let step17 = machine.drained(now: 10)
        #expect(step17 == .linger)
        #expect(machine.state == .lingering(until: 10 + ConnectionStateMachine.lingerNanoseconds))
        // What the client sends meanwhile is discarded.
        let discarded = !Array("more".utf8).withUnsafeBytes { machine.received($0, now: 11) }
        #expect(discarded)
        #expect(machine.deadline(now: 11) == .none)
        #expect(machine.deadline(now: 11 + ConnectionStateMachine.lingerNanoseconds) == .close)
        let step18 = machine.failed(eof: true, outputPending: false)
        #expect(step18 == .close)
    }

    func uploadLimits() -> RequestLimits {
        var limits = RequestLimits()
        limits.streamedBodyLimit = { _ in 1 << 30 }
        return limits
    }

    @Test("an upload is admitted at its head, streams into its sink, backs up and resumes")
    func upload() {
        var machine = machine(limits: uploadLimits())
        let events = receive(
            "PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", into: &machine, now: 7)
        guard case .admit(_, upload: true) = events.last else {
            Issue.record("expected an upload's admission, got \(events)")
            return
        }
        #expect(machine.state == .admitting(upload: .init(startedAt: 7)))
        // Nothing is parsed while the responder decides.
        let step19 = machine.nextRequestEvent(now: 0)
        #expect(step19 == .wait)
        #expect(machine.deadline(now: 1000 * Self.second) == .none)
        let step20 = machine.admitted(refused: false)
        #expect(step20 == .openSink)
        #expect(receive("hello", into: &machine) == [.bodyPart(ArraySlice(Array("hello".utf8)))])
        #expect(machine.state == .receivingUpload(.init(startedAt: 7, bytes: 5)))
        machine.sinkBackedUp()
        #expect(receive("world", into: &machine).isEmpty)
        let step21 = machine.sinkCaughtUp()
        #expect(step21)
        let step22 = machine.sinkCaughtUp()
        #expect(!step22)
        let rest = parse(&machine)
        #expect(rest.first == .bodyPart(ArraySlice(Array("world".utf8))))
        #expect(isDispatch(rest.last, target: "/b"))
    }

    @Test("an upload below the minimum rate times out once the read timeout has passed")
    func slowUpload() {
        var machine = machine(limits: uploadLimits())
        _ = receive("PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", into: &machine, now: 0)
        _ = machine.admitted(refused: false)
        _ = receive(String(repeating: "x", count: 1024), into: &machine, now: 30 * Self.second)
        #expect(machine.deadline(now: 31 * Self.second) == .none)
        #expect(machine.deadline(now: 32 * Self.second) == .uploadTooSlow)
    }

    @Test("a refused admission refuses; one answered after the client left does nothing")
    func refusedAdmission() {
        var machine = machine(limits: uploadLimits())
        _ = receive("PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", into: &machine)
        let step23 = machine.admitted(refused: true)
        #expect(step23 == .refuse)
        let step24 = machine.refusing()
        #expect(step24)
        var gone = self.machine(limits: uploadLimits())
        _ = receive("PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", into: &gone)
        let step25 = gone.failed(eof: true, outputPending: false)
        #expect(step25 == .close)
        _ = gone.close()
        let step26 = gone.admitted(refused: false)
        #expect(step26 == .none)
    }

    @Test("a large buffered body is admitted at its head, then read")
    func bufferedAdmission() {
        var limits = RequestLimits()
        limits.announcedBodiesOver = 4
        var machine = machine(limits: limits)
        let events = receive("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", into: &machine)
        guard case .admit(_, upload: false) = events.last else {
            Issue.record("expected an admission, got \(events)")
            return
        }
        let step27 = machine.admitted(refused: false)
        #expect(step27 == .readBody)
        #expect(machine.state == .reading)
        #expect(isDispatch(receive("0123456789", into: &machine).last, target: "/"))
    }

    @Test(
        "a half-close while the handler runs cancels it; its answer is still sent, then the connection closes"
    )
    func halfCloseWhileHandling() {
        var machine = machine()
        _ = receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        let step28 = machine.failed(eof: true, outputPending: false)
        #expect(step28 == .cancelHandler)
        let step29 = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        #expect(step29 == .send(keepAlive: false))
        let step30 = machine.answerSent(keepAlive: false, overBound: false, now: 0)
        #expect(step30 == .closeWhenFlushed)
    }

    @Test("a half-close with an answer still being sent closes after it; a reset closes at once")
    func halfCloseAfterAnswer() {
        var machine = machine()
        let step31 = machine.failed(eof: true, outputPending: true)
        #expect(step31 == .closeWhenFlushed)
        #expect(machine.state == .closing(.answer))
        var reset = self.machine()
        let step32 = reset.failed(eof: false, outputPending: true)
        #expect(step32 == .close)
    }

    @Test("a streamed answer owns the connection until it ends; a client leaving ends it at once")
    func streamedAnswer() {
        var machine = machine()
        _ = receive("GET /events HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        let step33 = machine.answerReady(hasStream: true, headOnly: false, keepAlive: true)
        #expect(step33 == .stream)
        #expect(machine.isStreaming)
        #expect(machine.deadline(now: 1000 * Self.second) == .none)
        let step34 = machine.streamEnded()
        #expect(step34)
        let step35 = machine.streamEnded()
        #expect(!step35)
        let step36 = machine.drained(now: 0)
        #expect(step36 == .close)
        let step37 = machine.failed(eof: true, outputPending: true)
        #expect(step37 == .close)
        // HEAD sends the head only, and closes; a stream for a client gone is dropped.
        var head = self.machine()
        _ = receive("HEAD /events HTTP/1.1\r\nHost: x\r\n\r\n", into: &head)
        let step38 = head.answerReady(hasStream: true, headOnly: true, keepAlive: true)
        #expect(step38 == .send(keepAlive: false))
        var gone = self.machine()
        _ = receive("GET /events HTTP/1.1\r\nHost: x\r\n\r\n", into: &gone)
        _ = gone.failed(eof: true, outputPending: false)
        let step39 = gone.answerReady(hasStream: true, headOnly: false, keepAlive: true)
        #expect(step39 == .drop)
    }

    @Test("an answer after the connection refused meanwhile (memory) is dropped")
    func answerAfterRefusal() {
        var machine = machine()
        _ = receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n", into: &machine)
        let step40 = machine.refusing()
        #expect(step40)
        let step41 = machine.answerReady(hasStream: false, headOnly: false, keepAlive: true)
        #expect(step41 == .drop)
    }

    @Test("idle and slow requests time out: idle closes, a request begun but unfinished is a 408")
    func timeouts() {
        let idle = machine()
        #expect(idle.deadline(now: 60 * Self.second) == .none)
        #expect(idle.deadline(now: 61 * Self.second) == .close)
        var slow = machine()
        _ = receive("GET / HTTP/1.1\r\n", into: &slow, now: Self.second)
        #expect(slow.deadline(now: 31 * Self.second) == .none)
        #expect(slow.deadline(now: 32 * Self.second) == .requestTimedOut)
        // While a handler runs, no timeout applies.
        _ = receive("Host: x\r\n\r\n", into: &slow)
        #expect(slow.deadline(now: 1000 * Self.second) == .none)
    }

    @Test("TLS: the handshake has its own deadline and no goodbye; after it, close_notify is allowed")
    func handshake() {
        let machine = machine(secure: true)
        #expect(machine.state == .handshaking)
        #expect(machine.isIdle)
        #expect(machine.deadline(now: 10 * Self.second) == .none)
        #expect(machine.deadline(now: 11 * Self.second) == .handshakeTimedOut(timeout: 10))
        var failed = self.machine(secure: true)
        let step42 = failed.close()
        #expect(!step42)
        var done = self.machine(secure: true)
        done.handshakeFinished()
        #expect(done.state == .reading)
        let step43 = done.close()
        #expect(step43)
    }

    @Test("held bytes beyond the uncounted first 16 KiB are charged, and given back")
    func heldBytes() {
        var machine = machine()
        let head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
        _ = receive(head + String(repeating: "x", count: 20000), into: &machine)
        let charged = machine.heldBytesDelta()
        #expect(charged > 0)
        #expect(charged == machine.parser.heldByteCount - ConnectionStateMachine.uncountedHeldBytes)
        let step44 = machine.heldBytesDelta()
        #expect(step44 == 0)
        let step45 = machine.releaseHeldBytes()
        #expect(step45 == charged)
        let step46 = machine.releaseHeldBytes()
        #expect(step46 == 0)
    }
}
