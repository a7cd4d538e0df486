/// The life of one connection as a value: every event (bytes read, a handler done, the output
/// drained, the socket failed, a clock tick) moves one ``State`` and returns what to do, which
/// ``Connection`` carries out against libevent. It owns the request parser and the clocks of the
/// timeouts, and nothing that does I/O, so tests drive it without sockets (as ``RequestParser``).
///
/// Requests are answered in order, one at a time: while a handler runs, bytes that arrive are
/// kept (a pipelining client's next requests) but not parsed, and reading pauses once more than
/// ``pipelineBufferLimit`` of them wait.
struct ConnectionStateMachine {
    enum State: Equatable {
        /// TLS: the handshake has not finished; its deadline runs from the accept.
        case handshaking
        /// Waiting for a request, or receiving one whose body is buffered.
        case reading
        /// A head is being checked by the responder (an upload's, or a large buffered body's):
        /// nothing is read meanwhile. `upload` is set when its body is streamed to a sink.
        case admitting(upload: Upload?)
        /// An admitted upload is being received into its sink.
        case receivingUpload(Upload)
        /// The sink is backed up: reading and parsing wait until it catches up.
        case waitingForSink(Upload)
        /// A handler runs. `peerClosed`: the client half-closed (answer, then close);
        /// `readingPaused`: a pipelining client sent more than the limit ahead.
        case handling(peerClosed: Bool, readingPaused: Bool)
        /// A response body streams (see ``ResponseStream``); the connection ends with it.
        case streaming
        /// An answer was sent but more than the bound of answers waits unsent: reading and
        /// handling wait until half of it is.
        case waitingForDrain
        /// The connection closes once its output is sent.
        case closing(Farewell)
        /// After a refusal: the write side is shut, input is discarded until the client closes
        /// or this time passes, so the client reads the answer instead of a reset.
        case lingering(until: UInt64)
        case closed
    }

    /// An upload in progress, for the minimum-rate rule.
    struct Upload: Equatable {
        var startedAt: UInt64
        var bytes = 0
    }

    /// Why the connection closes after its output.
    enum Farewell: Equatable {
        /// A final answer (no keep-alive, or the client half-closed).
        case answer
        /// A streamed response ended.
        case stream
        /// A refusal or a protocol error: it lingers after the write, reading to discard.
        case refusal
    }

    /// The clocks a connection is held to, in seconds (bytes per second for the rate).
    struct Timeouts {
        var read: Int
        var idle: Int
        /// The TLS handshake's own limit (never more than `read`).
        var handshake: Int
        var minimumUploadRate: Int
    }

    static let pipelineBufferLimit = 1 << 20
    static let lingerNanoseconds: UInt64 = 2_000_000_000

    private(set) var state: State
    var parser: RequestParser
    let timeouts: Timeouts
    /// Since when the connection waits for its next request (the accept, or the last answer).
    private(set) var waitingSince: UInt64
    /// When the request in progress began arriving (for an upload: its last bytes).
    private(set) var firstByteAt: UInt64?
    /// What the parser holds beyond the uncounted bytes, as charged to the server's budget.
    private(set) var chargedBytes = 0
    /// Bytes each connection holds without counting them (see ``heldBytesDelta(uncounted:)``).
    static let uncountedHeldBytes = 16 * 1024

    init(secure: Bool, limits: RequestLimits, timeouts: Timeouts, now: UInt64) {
        state = secure ? .handshaking : .reading
        parser = RequestParser(limits: limits)
        self.timeouts = timeouts
        waitingSince = now
    }

    /// Whether the connection waits for a request with none of it received (closed at once
    /// when the server drains).
    var isIdle: Bool {
        switch state {
        case .handshaking, .reading, .waitingForDrain, .admitting, .receivingUpload, .waitingForSink:
            return parser.isIdle
        case .handling, .streaming, .closing, .lingering, .closed:
            return false
        }
    }

    /// Whether the connection has begun to close: no more is read, charged or answered.
    var isClosing: Bool {
        switch state {
        case .closing, .lingering, .closed: return true
        default: return false
        }
    }

    var isStreaming: Bool { state == .streaming }

    // MARK: Reading

    /// Bytes arrived. False when they are to be discarded (lingering or closed).
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: @autoclosure () -> UInt64) -> Bool {
        switch state {
        case .lingering, .closed: return false
        // Plaintext arrives only after the handshake.
        case .handshaking: state = .reading
        default: break
        }
        // An upload may take long; only a stall counts against the read timeout.
        if firstByteAt == nil || isReceivingUpload { firstByteAt = now() }
        parser.append(bytes)
        return true
    }

    private var isReceivingUpload: Bool {
        switch state {
        case .receivingUpload, .waitingForSink: return true
        default: return false
        }
    }

    enum AfterRead: Equatable {
        /// Parse what arrived (``nextRequestEvent(now:)`` until it waits).
        case parse
        /// A pipelining client is too far ahead: stop reading until the handler is done.
        case pauseReading
        case none
    }

    /// What to do with bytes just received (and charged).
    mutating func afterRead() -> AfterRead {
        switch state {
        case .handling(let peerClosed, _):
            guard parser.bufferedByteCount > Self.pipelineBufferLimit else { return .none }
            state = .handling(peerClosed: peerClosed, readingPaused: true)
            return .pauseReading
        case .streaming, .waitingForDrain:
            return parser.bufferedByteCount > Self.pipelineBufferLimit ? .pauseReading : .none
        default:
            return .parse
        }
    }

    /// What the parser's bytes ask for next.
    enum RequestEvent: Equatable {
        /// Nothing (more) to do until bytes arrive or the state changes.
        case wait
        /// Send `100 Continue`, then wait.
        case sendContinue
        /// Answer with this error and close.
        case fail(HTTPProtocolError)
        /// Ask the responder whether this request may proceed, reading nothing meanwhile.
        /// With `upload`, its body streams: take an upload slot first (refuse when none is free).
        case admit(RequestHead, upload: Bool)
        /// Write these bytes of the upload to its sink, then ask again.
        case bodyPart(ArraySlice<UInt8>)
        /// Run the handler for this request.
        case dispatch(RequestHead, body: [UInt8])
    }

    /// Advances the parser while the state lets it; `now` stamps an upload's start.
    mutating func nextRequestEvent(now: @autoclosure () -> UInt64) -> RequestEvent {
        switch state {
        case .reading, .receivingUpload: break
        default: return .wait
        }
        switch parser.next() {
        case .needMore(let sendContinue):
            if parser.isIdle { firstByteAt = nil }
            return sendContinue ? .sendContinue : .wait
        case .failure(let error):
            return .fail(error)
        case .streamStart(let head):
            state = .admitting(upload: Upload(startedAt: now()))
            return .admit(head, upload: true)
        case .bodyStart(let head):
            state = .admitting(upload: nil)
            return .admit(head, upload: false)
        case .bodyPart(let bytes):
            if case .receivingUpload(var upload) = state {
                upload.bytes += bytes.count
                state = .receivingUpload(upload)
            }
            return .bodyPart(bytes)
        case .request(let head, let body):
            state = .handling(peerClosed: false, readingPaused: false)
            return .dispatch(head, body: body)
        }
    }

    /// The sink refused more: stop reading until it catches up.
    mutating func sinkBackedUp() {
        guard case .receivingUpload(let upload) = state else { return }
        state = .waitingForSink(upload)
    }

    /// The sink caught up; true when reading and parsing resume.
    mutating func sinkCaughtUp() -> Bool {
        guard case .waitingForSink(let upload) = state else { return false }
        state = .receivingUpload(upload)
        return true
    }

    // MARK: Admission

    enum Admission: Equatable {
        /// The connection is gone (or going): nothing to do.
        case none
        /// Answer with the refusal and close.
        case refuse
        /// Read the buffered body now.
        case readBody
        /// Open the upload's sink, then read into it.
        case openSink
    }

    /// The responder answered an admission check.
    mutating func admitted(refused: Bool) -> Admission {
        guard case .admitting(let upload) = state else { return .none }
        if refused { return .refuse }
        guard let upload, parser.isStreamingBody else {
            state = .reading
            return .readBody
        }
        state = .receivingUpload(upload)
        return .openSink
    }

    // MARK: Answers

    enum Answer: Equatable {
        /// The answer has nowhere to go (the client left, or was refused meanwhile): drop it.
        case drop
        /// Send its head and hand the connection to its stream.
        case stream
        /// Send it, with keep-alive or not.
        case send(keepAlive: Bool)
    }

    /// A handler returned. `hasStream`: its body streams (`headOnly`: for HEAD, only the head
    /// goes); `keepAlive`: the request and response allow another request and the server is
    /// not draining.
    mutating func answerReady(hasStream: Bool, headOnly: Bool, keepAlive: Bool) -> Answer {
        guard case .handling(let peerClosed, _) = state else { return .drop }
        if hasStream {
            if peerClosed {
                // As before the state machine: the connection waits, not reading, for its
                // idle timeout.
                state = .reading
                return .drop
            }
            if !headOnly {
                state = .streaming
                return .stream
            }
        }
        return .send(keepAlive: keepAlive && !peerClosed && !hasStream)
    }

    enum AfterAnswer: Equatable {
        case none
        /// Close once the output is sent (now, if it is).
        case closeWhenFlushed
        /// Stop reading until the output drains to half the bound.
        case waitForDrain
        /// Read the next request (resuming reading when it was paused).
        case next(resumeReading: Bool)
    }

    /// The answer was written. `keepAlive`: the connection stays open (the body was sent, too);
    /// `overBound`: more than the bound of answers waits unsent.
    mutating func answerSent(keepAlive: Bool, overBound: Bool, now: UInt64) -> AfterAnswer {
        guard case .handling(_, let readingPaused) = state else { return .none }
        guard keepAlive else {
            state = .closing(.answer)
            return .closeWhenFlushed
        }
        waitingSince = now
        firstByteAt = parser.isIdle ? nil : now
        if overBound {
            state = .waitingForDrain
            return .waitForDrain
        }
        state = .reading
        return .next(resumeReading: readingPaused)
    }

    /// A streamed response ended: close once its output is sent. False when already closing.
    mutating func streamEnded() -> Bool {
        guard state == .streaming else { return false }
        state = .closing(.stream)
        return true
    }

    /// A refusal or a protocol error is sent: the request is abandoned and the connection closes
    /// once it is written, lingering. False when the connection closes already.
    mutating func refusing() -> Bool {
        guard !isClosing else { return false }
        state = .closing(.refusal)
        return true
    }

    // MARK: Output and failures

    enum Drained: Equatable {
        case none
        /// The output drained after waiting: resume reading and parsing.
        case resumeReading
        case close
        /// Shut the write side and keep reading (to discard) until the linger ends.
        case linger
    }

    /// The output was sent completely (or down to the drain watermark).
    mutating func drained(now: @autoclosure () -> UInt64) -> Drained {
        switch state {
        case .waitingForDrain:
            state = .reading
            return .resumeReading
        case .closing(.refusal):
            state = .lingering(until: now() + Self.lingerNanoseconds)
            return .linger
        case .closing:
            return .close
        default:
            return .none
        }
    }

    enum Failure: Equatable {
        case close
        /// The client half-closed while its handler runs: tell the handler to stop (its answer
        /// is still sent if it gives one), read no more.
        case cancelHandler
        /// The client half-closed with an answer still being sent: close after it.
        case closeWhenFlushed
    }

    /// The socket reported an end of stream (`eof`) or an error; `outputPending`: answers wait
    /// to be sent.
    mutating func failed(eof: Bool, outputPending: Bool) -> Failure {
        switch state {
        case .lingering, .streaming, .closing(.stream):
            return .close
        case .handling(_, let readingPaused) where eof:
            state = .handling(peerClosed: true, readingPaused: readingPaused)
            return .cancelHandler
        default:
            guard eof, outputPending else { return .close }
            if !isClosing { state = .closing(.answer) }
            return .closeWhenFlushed
        }
    }

    /// The connection closes now. Returns whether a TLS session may say goodbye (close_notify):
    /// not before its handshake finished.
    mutating func close() -> Bool {
        let handshook = state != .handshaking
        state = .closed
        return handshook
    }

    /// The TLS handshake finished.
    mutating func handshakeFinished() {
        if state == .handshaking { state = .reading }
    }

    // MARK: Held bytes

    /// What to add to (or, negative, take from) the server's held-bytes budget for what the
    /// parser holds now; 0 once closing (a connection on its way out gave back what it held).
    mutating func heldBytesDelta() -> Int {
        guard !isClosing else { return 0 }
        let delta = max(0, parser.heldByteCount - Self.uncountedHeldBytes) - chargedBytes
        chargedBytes += delta
        return delta
    }

    /// Everything charged, to give back.
    mutating func releaseHeldBytes() -> Int {
        defer { chargedBytes = 0 }
        return chargedBytes
    }
}
