/// The parsed start line and header fields of a request.
public struct RequestHead: Sendable, Equatable {
    public var method: String
    public var target: String
    public var minorVersion: Int
    public var headers: [HTTPHeaderField]
    /// Whether the connection may carry another request after this one.
    public var keepAlive: Bool
    /// The route, when it was found from the head (see ``RequestLimits/streamedBodyLimit``).
    public var route: RouteMatch? = nil
}

/// One header field, as received.
public struct HTTPHeaderField: Sendable, Equatable {
    public var name: String
    public var value: String
}

/// Bounds on what one request may use; each breach has its own status.
public struct RequestLimits: Sendable {
    /// Bytes from the request line to the blank line: 431 beyond.
    public var maxHeaderBytes: Int
    /// Header fields per request: 431 beyond.
    public var maxHeaderCount: Int
    /// Body bytes after de-chunking: 413 beyond.
    public var maxBodyBytes: Int
    /// For requests it returns a limit for, the body is streamed (``RequestParser/Event/bodyPart(_:)``)
    /// instead of buffered, and capped at that limit instead of ``maxBodyBytes``. It routes the
    /// head to decide, and keeps the route it found in ``RequestHead/route``.
    public var streamedBodyLimit: (@Sendable (inout RequestHead) -> Int?)?
    /// A buffered body larger than this (or chunked, whose size is not known) is announced with
    /// ``RequestParser/Event/bodyStart(_:)`` before a byte of it is taken, so the server can
    /// refuse the request from its head; nil announces none.
    public var announcedBodiesOver: Int?

    public init(
        maxHeaderBytes: Int = 32 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 10 * 1024 * 1024
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
        streamedBodyLimit = nil
    }
}

/// An incremental HTTP/1.1 request parser: a value-type state machine that tests drive without I/O.
///
/// Feed it bytes with ``append(_:)`` and call ``next()`` until it needs more. It refuses what could
/// smuggle requests (both `Content-Length` and `Transfer-Encoding`, conflicting lengths, folded
/// headers) and enforces ``RequestLimits``.
public struct RequestParser: Sendable {
    /// What the parser has to say after new bytes arrived.
    public enum Event: Sendable, Equatable {
        /// Not enough bytes yet; `sendContinue` asks the caller to send `100 Continue` now.
        case needMore(sendContinue: Bool)
        /// A whole request; for a streamed body, `body` is empty and the parts came before.
        case request(RequestHead, body: [UInt8])
        /// The head of a request whose body is streamed: parts follow, then ``request(_:body:)``.
        case streamStart(RequestHead)
        /// The next bytes of a streamed body.
        case bodyPart(ArraySlice<UInt8>)
        /// The head of a request with a large buffered body (see
        /// ``RequestLimits/announcedBodiesOver``): its body follows with the next calls.
        case bodyStart(RequestHead)
        /// The request is malformed or over a limit; answer and close.
        case failure(HTTPProtocolError)
    }

    private enum State: Sendable {
        case head
        case fixedBody(RequestHead, remaining: Int)
        case chunkSize(RequestHead)
        case chunkData(RequestHead, remaining: Int)
        case chunkDataEnd(RequestHead)
        case trailers(RequestHead)
        case failed
    }

    public let limits: RequestLimits
    // Internal, for the framing helpers in ChunkedFraming.swift.
    var buffer: [UInt8] = []
    var position = 0
    var scanned = 0
    private var state: State = .head
    private var body: [UInt8] = []
    private var continuePending = false
    /// Whether the body in progress is streamed, and the limit and count of its bytes.
    private var streaming = false
    private var bodyLimit = 0
    private var bodyCount = 0
    /// Bytes and fields of the trailers received so far, bounded like the head's.
    private var trailerBytes = 0
    private var trailerCount = 0

    public init(limits: RequestLimits) {
        self.limits = limits
    }

    /// Whether the body in progress streams to a sink (else it is buffered).
    public var isStreamingBody: Bool { streaming }

    /// Whether no byte of a next request has arrived.
    public var isIdle: Bool {
        if case .head = state { return position == buffer.count }
        return false
    }

    /// Bytes received but not yet consumed by a request.
    public var bufferedByteCount: Int { buffer.count - position }

    /// Bytes the parser holds for requests: those not yet parsed and the body being collected.
    /// (Parsed bytes linger until the next append, 64 KiB at most beyond one read.)
    public var heldByteCount: Int { buffer.count - position + body.count }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
            scanned = 0
        } else if position >= Self.compactionThreshold {
            // A pipelining client may never let the buffer run empty: drop what was consumed.
            buffer.removeFirst(position)
            scanned -= position
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Advances as far as the buffered bytes allow.
    public mutating func next() -> Event {
        while true {
            switch state {
            case .failed:
                return .needMore(sendContinue: false)
            case .head:
                let end: Int
                switch findHeadEnd() {
                case .found(let found): end = found
                case .bareLineFeed:
                    return fail(Self.invalid("Header lines must end with CRLF, not a bare LF."))
                case .incomplete, .tooLong:
                    if buffer.count - position > limits.maxHeaderBytes {
                        return fail(
                            431, .headersTooLarge,
                            "The request headers exceed \(limits.maxHeaderBytes) bytes.")
                    }
                    return .needMore(sendContinue: false)
                }
                if end - position > limits.maxHeaderBytes {
                    return fail(
                        431, .headersTooLarge, "The request headers exceed \(limits.maxHeaderBytes) bytes."
                    )
                }
                var head: RequestHead
                let framing: Framing
                let expectsContinue: Bool
                switch parseHead(buffer[position..<end]) {
                case .success(let parsed): (head, framing, expectsContinue) = parsed
                case .failure(let error): return fail(error)
                }
                position = end + 4
                scanned = position
                body = []
                bodyCount = 0
                // Only a request with a body can stream one; GETs skip the question.
                let streamLimit = framing == .none ? nil : limits.streamedBodyLimit?(&head)
                streaming = streamLimit != nil
                bodyLimit = streamLimit ?? limits.maxBodyBytes
                switch framing {
                case .none:
                    return finish(head)
                case .length(let length):
                    if length > bodyLimit { return tooLarge() }
                    if length == 0 && !streaming { return finish(head) }
                    // Capacity follows the bytes that arrive, not what a client declares.
                    if !streaming { body.reserveCapacity(min(length, 64 * 1024)) }
                    state = .fixedBody(head, remaining: length)
                case .chunked:
                    state = .chunkSize(head)
                }
                continuePending = expectsContinue
                if streaming { return .streamStart(head) }
                if let threshold = limits.announcedBodiesOver {
                    if case .length(let length) = framing, length <= threshold { continue }
                    return .bodyStart(head)
                }
            case .fixedBody(let head, let remaining):
                if remaining == 0 { return finish(head) }
                let available = min(remaining, buffer.count - position)
                if streaming {
                    guard available > 0 else { return needMore() }
                    state = .fixedBody(head, remaining: remaining - available)
                    return takePart(available)
                }
                body.append(contentsOf: buffer[position..<position + available])
                position += available
                if available == remaining { return finish(head) }
                state = .fixedBody(head, remaining: remaining - available)
                return needMore()
            case .chunkSize(let head):
                let line: Range<Int>
                switch findLineEnd(limit: Self.maxChunkLineBytes) {
                case .found(let end): line = position..<end
                case .incomplete: return needMore()
                case .bareLineFeed: return fail(Self.invalid("A chunk size line must end with CRLF."))
                case .tooLong: return fail(Self.invalid("A chunk size line is too long."))
                }
                let size: Int
                switch Self.chunkSize(buffer[line]) {
                case .size(let parsed): size = parsed
                case .tooLarge: return tooLarge()
                case .invalid(let message): return fail(Self.invalid(message))
                }
                position = line.upperBound + 2
                if size == 0 {
                    trailerBytes = 0
                    trailerCount = 0
                    state = .trailers(head)
                } else {
                    // Subtracting keeps a client's size from overflowing the sum.
                    if size > bodyLimit - bodyCount { return tooLarge() }
                    bodyCount += size
                    state = .chunkData(head, remaining: size)
                }
            case .chunkData(let head, let remaining):
                let available = min(remaining, buffer.count - position)
                if streaming {
                    guard available > 0 else { return needMore() }
                    state =
                        available < remaining
                        ? .chunkData(head, remaining: remaining - available) : .chunkDataEnd(head)
                    return takePart(available)
                }
                body.append(contentsOf: buffer[position..<position + available])
                position += available
                if available < remaining {
                    state = .chunkData(head, remaining: remaining - available)
                    return needMore()
                }
                state = .chunkDataEnd(head)
            case .chunkDataEnd(let head):
                guard buffer.count - position >= 2 else { return needMore() }
                guard buffer[position] == 13, buffer[position + 1] == 10 else {
                    return fail(Self.invalid("A chunk is longer than its declared size."))
                }
                position += 2
                state = .chunkSize(head)
            case .trailers(let head):
                let line: Range<Int>
                switch findLineEnd(limit: limits.maxHeaderBytes - trailerBytes) {
                case .found(let end): line = position..<end
                case .incomplete: return needMore()
                case .bareLineFeed: return fail(Self.invalid("A trailer line must end with CRLF."))
                case .tooLong:
                    return fail(
                        431, .headersTooLarge, "The trailers exceed \(limits.maxHeaderBytes) bytes.")
                }
                position = line.upperBound + 2
                if line.isEmpty { return finish(head) }
                trailerBytes += line.count + 2
                trailerCount += 1
                if trailerCount > limits.maxHeaderCount {
                    return fail(
                        431, .headersTooLarge,
                        "The request has more than \(limits.maxHeaderCount) trailer fields.")
                }
                if let problem = Self.fieldLineProblem(buffer[line]) { return fail(Self.invalid(problem)) }
            }
        }
    }

    private mutating func needMore() -> Event {
        let send = continuePending
        continuePending = false
        return .needMore(sendContinue: send)
    }

    /// The next `count` buffered bytes as a part of a streamed body.
    private mutating func takePart(_ count: Int) -> Event {
        let part = buffer[position..<position + count]
        position += count
        return .bodyPart(part)
    }

    private mutating func finish(_ head: RequestHead) -> Event {
        state = .head
        streaming = false
        continuePending = false
        let completed = body
        body = []
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            position = 0
        }
        scanned = position
        return .request(head, body: completed)
    }

    private mutating func tooLarge() -> Event {
        fail(413, .bodyTooLarge, "The request body exceeds the limit of \(bodyLimit) bytes.")
    }

    private mutating func fail(_ status: Int, _ code: ErrorCode, _ message: String) -> Event {
        fail(HTTPProtocolError(status: status, code: code, message: message))
    }

    private mutating func fail(_ error: HTTPProtocolError) -> Event {
        state = .failed
        return .failure(error)
    }

}
