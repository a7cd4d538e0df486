import CLibEvent
import Dispatch
import Glibc

/// One client connection: reads requests, hands each to the responder, writes the reply.
///
/// Requests on a connection are answered in order, one at a time. While a handler runs the
/// connection keeps reading (to notice a close, which cancels the handler's task) but stops once
/// a pipelining client has sent more than ``pipelineBufferLimit`` bytes ahead, and it neither
/// reads nor starts a handler while more than ``HTTPServer/Configuration/maxUnsentBytes`` of its
/// answers wait to be sent. A streamed body is admitted by the responder when its head arrives,
/// holds one of the server's upload slots, and must keep up a minimum rate.
// @unchecked Sendable: every property is used on the owning loop's thread only; handler tasks
// come back through `loop.execute`.
final class Connection: @unchecked Sendable {
    // Strong: the loop drops the connection on close, which breaks the cycle.
    let loop: EventLoop
    var bev: OpaquePointer?
    var parser: RequestParser
    let remoteAddress: String
    private var handling = false
    /// The client half-closed while its request was being handled: answer, then close.
    private var peerClosed = false
    private var readingPaused = false
    private static let pipelineBufferLimit = 1 << 20
    var closeAfterWrite = false
    var waitingSince: UInt64
    private var firstByteAt: UInt64?
    /// Set after an error reply: the write side is shut and input is discarded until the client
    /// closes or this time passes, so the client reads the reply instead of a reset.
    private var lingerUntil: UInt64?
    /// Where the body of the request being received goes, when its route streams bodies.
    var bodySink: (any RequestBodySink)?
    /// The sink is backed up: reading and parsing wait until it catches up.
    var waitingForSink = false
    /// The task running the current handler or admission check; cancelled when the client goes.
    var handlerTask: Task<Void, Never>?
    /// A streamed request's head is being checked: nothing is read until it is admitted.
    var admitting = false
    /// The client does not read its answers: reading and handling wait for the output to drain.
    private var waitingForDrain = false
    /// This connection receives an upload, counted in the server's upload ``ClientSlots``.
    var holdsUploadSlot = false
    /// The client address the held upload slot counts against.
    var uploadSlotClient = ""
    var streamStartedAt: UInt64 = 0
    var streamBytes = 0
    /// What this connection's parser holds, as counted in the server's ``HTTPServer/heldBytes``.
    var chargedBytes = 0
    /// Over TLS (see Connection+TLS.swift): bytes go through OpenSSL, never straight to the socket.
    let secure: Bool
    /// The TLS handshake has not finished: the read timeout runs from the accept.
    var handshaking: Bool
    /// TLS failed on this connection, so no close_notify may be sent.
    var tlsFailed = false
    /// The response being streamed (see Connection+Streaming.swift); the connection ends with it.
    var streaming: ResponseStream?

    init?(fd: Int32, remoteAddress: String, loop: EventLoop) {
        secure = loop.server.configuration.tls != nil
        handshaking = secure
        guard let bev = Self.makeBufferEvent(fd: fd, loop: loop) else { return nil }
        self.bev = bev
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.parser = RequestParser(limits: loop.server.configuration.limits)
        self.waitingSince = DispatchTime.now().uptimeNanoseconds
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev,
            { _, context in Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().readable() },
            { _, context in Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().drained() },
            { _, events, context in
                Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().failed(events)
            },
            context)
        var writeTimeout = timeval(tv_sec: loop.server.configuration.writeTimeout, tv_usec: 0)
        bufferevent_set_timeouts(bev, nil, &writeTimeout)
        bufferevent_enable(bev, roost_ev_read() | roost_ev_write())
    }

    /// Whether the connection waits for a request with none of it received.
    var isIdle: Bool { !handling && parser.isIdle && !closeAfterWrite }

    func close() {
        streaming?.end()
        streaming = nil
        bodySink?.discard()
        bodySink = nil
        releaseUploadSlot()
        releaseHeldBytes()
        // A handler still running works for nobody now.
        handlerTask?.cancel()
        handlerTask = nil
        guard let bev else { return }
        sayGoodbye()
        bufferevent_free(bev)
        self.bev = nil
        loop.remove(self)
    }

    /// Closes connections that idle too long or send a request too slowly.
    func checkDeadline(now: UInt64) {
        if let lingerUntil, now > lingerUntil {
            close()
            return
        }
        if handshaking {
            return handshakeDeadline(now: now)
        }
        guard bev != nil, !handling, !closeAfterWrite, !admitting, !waitingForDrain else { return }
        let configuration = loop.server.configuration
        if uploadTooSlow(now: now, configuration: configuration) {
            return sendError(
                HTTPProtocolError(
                    status: 408, code: "request_timeout",
                    message:
                        "The upload arrived slower than \(configuration.minimumUploadRate) bytes per second; send it again."
                ))
        }
        if let firstByteAt {
            if elapsed(since: firstByteAt, now: now) > UInt64(configuration.readTimeout) * 1_000_000_000 {
                sendError(
                    HTTPProtocolError(
                        status: 408, code: "request_timeout",
                        message: "The request was not received in time; send it again."))
            }
        } else if elapsed(since: waitingSince, now: now) > UInt64(configuration.idleTimeout) * 1_000_000_000 {
            close()
        }
    }

    private func readable() {
        guard let bev, let input = bufferevent_get_input(bev) else { return }
        let length = evbuffer_get_length(input)
        guard length > 0 else { return }
        if lingerUntil != nil {
            evbuffer_drain(input, length)
            return
        }
        // A streamed body may take long; only a stall counts against the read timeout.
        if firstByteAt == nil || bodySink != nil { firstByteAt = DispatchTime.now().uptimeNanoseconds }
        if let bytes = evbuffer_pullup(input, -1) {
            parser.append(UnsafeRawBufferPointer(start: bytes, count: length))
        }
        evbuffer_drain(input, length)
        guard chargeHeldBytes() else { return sendError(Self.memoryBusy, retryAfter: 1) }
        if !handling && !waitingForDrain {
            processBuffered()
            chargeHeldBytes()
        } else if parser.bufferedByteCount > Self.pipelineBufferLimit {
            readingPaused = true
            bufferevent_disable(bev, roost_ev_read())
        }
    }

    func processBuffered() {
        guard bev != nil, !handling, !closeAfterWrite, !waitingForSink, !admitting, !waitingForDrain else {
            return
        }
        while true {
            switch parser.next() {
            case .needMore(let sendContinue):
                if parser.isIdle { firstByteAt = nil }
                if sendContinue { write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
                return
            case .failure(let error):
                sendError(error)
                return
            case .streamStart(let head):
                let configuration = loop.server.configuration
                uploadSlotClient = uploadClient(head)
                guard
                    loop.server.uploads.acquire(
                        uploadSlotClient, total: configuration.maxUploads,
                        perClient: configuration.maxUploadsPerClient)
                else { return sendError(Self.uploadsBusy, retryAfter: 5) }
                holdsUploadSlot = true
                streamStartedAt = DispatchTime.now().uptimeNanoseconds
                streamBytes = 0
                return admit(head)
            case .bodyStart(let head):
                // A large buffered body: whoever may not send it is refused before it is read.
                return admit(head)
            case .bodyPart(let bytes):
                streamBytes += bytes.count
                guard let sink = bodySink, !sink.write(bytes), let bev else { continue }
                waitingForSink = true
                bufferevent_disable(bev, roost_ev_read())
                let loop = self.loop
                sink.whenReady { loop.execute { [self] in sinkCaughtUp() } }
                return
            case .request(let head, let body):
                let sink = bodySink
                bodySink = nil
                releaseUploadSlot()
                dispatch(head, body: body, sink: sink)
                return
            }
        }
    }

    private func sinkCaughtUp() {
        guard waitingForSink else { return }
        waitingForSink = false
        if let bev { bufferevent_enable(bev, roost_ev_read()) }
        processBuffered()
    }

    static let storageFailure = HTTPProtocolError(
        status: 500, code: "internal", message: "The request body could not be stored; try again later.")

    private func dispatch(_ head: RequestHead, body: [UInt8], sink: (any RequestBodySink)?) {
        handling = true
        let started = DispatchTime.now().uptimeNanoseconds
        let received = makeRequest(head, body: body)
        let keepAlive = head.keepAlive
        let responder = loop.server.responder
        let loop = self.loop
        let storageFailure = loop.server.configuration.errorBody(Self.storageFailure)
        handlerTask = Task(executorPreference: loop) {
            var request = received
            let response: Response
            do {
                // A streamed body is complete once its sink has written everything.
                request.streamedBody = try await sink?.finish()
                response = await responder.respond(to: request)
            } catch let error as HTTPProtocolError {
                // A sink may name its own answer (507 when the disk is full).
                response = loop.server.configuration.errorBody(error)
            } catch {
                response = storageFailure
            }
            // A handler that kept the body moved its file away; any other leaves it to remove.
            if let streamed = request.streamedBody { unlink(streamed.path) }
            let handled = request
            loop.run { [self] in finish(handled, response, keepAlive: keepAlive, started: started) }
        }
    }

    private func finish(_ request: Request, _ response: Response, keepAlive: Bool, started: UInt64) {
        handlerTask = nil
        // The client went away while the handler ran; its answer has nowhere to go.
        guard bev != nil, !peerClosed || response.stream == nil else {
            handling = false
            response.stream?.end()
            return
        }
        if let stream = response.stream, takeStream(stream, request, response, started: started) { return }
        handling = false
        let keepOpen =
            keepAlive && !peerClosed && !loop.isDraining && !response.headers.contains("Connection")
            && response.stream == nil
        let bytes = serialize(response, omitBody: request.method == .head, keepAlive: keepOpen)
        write(bytes)
        if let file = response.file, request.method != .head, let bev,
            let output = bufferevent_get_output(bev)
        {
            // sendfile from the page cache: the bytes never pass through this process's memory.
            let descriptor = file.take()
            if descriptor < 0
                || evbuffer_add_file(output, descriptor, Int64(file.offset), Int64(file.length)) != 0
            {
                if descriptor >= 0 { Glibc.close(descriptor) }
                closeAfterWrite = true
            }
        }
        let elapsed = RoostHTTP.elapsed(since: started, now: DispatchTime.now().uptimeNanoseconds) / 1000
        loop.server.observe(
            request: request, response: response, bytesSent: bytes.count, microseconds: elapsed,
            loop: loop.index)
        // `write` closes the connection when the socket failed.
        guard let bev else { return }
        if keepOpen && !closeAfterWrite {
            waitingSince = DispatchTime.now().uptimeNanoseconds
            firstByteAt = parser.isIdle ? nil : waitingSince
            if let output = bufferevent_get_output(bev),
                evbuffer_get_length(output) > loop.server.configuration.maxUnsentBytes
            {
                // Resumed by `drained` once the output is down to half the bound.
                waitingForDrain = true
                bufferevent_setwatermark(
                    bev, roost_ev_write(), loop.server.configuration.maxUnsentBytes / 2, 0)
                bufferevent_disable(bev, roost_ev_read())
                return
            }
            if readingPaused {
                readingPaused = false
                bufferevent_enable(bev, roost_ev_read())
            }
            processBuffered()
            chargeHeldBytes()
        } else {
            closeAfterWrite = true
            drainedIfFlushed()
        }
    }

    func serialize(_ response: Response, omitBody: Bool, keepAlive: Bool) -> [UInt8] {
        response.wireBytes(
            omitBody: omitBody, keepAlive: keepAlive, date: loop.dateCache.current,
            strictTransportSecurityLine: loop.server.strictTransportSecurityLine)
    }

    /// Sends at once when nothing is queued (saving the loop a round of epoll calls), and queues
    /// whatever the socket does not take: a copy, or with `shared`, a reference to the bytes'
    /// storage that keeps `shared` alive until they are written (many streams sending one event
    /// hold it once).
    func write(_ bytes: [UInt8], shared: (any AnyObject & Sendable)? = nil) {
        guard let bev, let output = bufferevent_get_output(bev) else { return }
        bytes.withUnsafeBytes { buffer in
            var sent = 0
            if !secure && evbuffer_get_length(output) == 0 {
                let result = send(
                    bufferevent_getfd(bev), buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                if result < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    close()
                    return
                }
                sent = max(0, result)
            }
            guard sent < buffer.count else { return }
            if let shared, buffer.count - sent >= Self.smallestSharedWrite {
                // The array is immutable and `shared` holds it, so its storage stays put until
                // the evbuffer lets go and the cleanup releases the retain taken here.
                let retained = Unmanaged.passRetained(SharedWrite(bytes: bytes, owner: shared)).toOpaque()
                let added = evbuffer_add_reference(
                    output, buffer.baseAddress! + sent, buffer.count - sent,
                    { _, _, context in Unmanaged<SharedWrite>.fromOpaque(context!).release() }, retained)
                if added == 0 { return }
                Unmanaged<SharedWrite>.fromOpaque(retained).release()
            }
            _ = bufferevent_write(bev, buffer.baseAddress! + sent, buffer.count - sent)
        }
    }

    /// Runs the end-of-write step now when the direct send left nothing queued.
    func drainedIfFlushed() {
        guard let bev, let output = bufferevent_get_output(bev), evbuffer_get_length(output) == 0 else {
            return
        }
        drained()
    }

    var lingerAfterWrite = false

    private func drained() {
        streaming?.outputChanged(0)
        if waitingForDrain, let bev {
            waitingForDrain = false
            bufferevent_setwatermark(bev, roost_ev_write(), 0, 0)
            readingPaused = false
            bufferevent_enable(bev, roost_ev_read())
            processBuffered()
            return
        }
        guard closeAfterWrite, let bev else { return }
        guard lingerAfterWrite, lingerUntil == nil else {
            if lingerUntil == nil { close() }
            return
        }
        sayGoodbye()
        shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
        lingerUntil = DispatchTime.now().uptimeNanoseconds + 2_000_000_000
        bufferevent_enable(bev, roost_ev_read())
    }

    private func failed(_ events: Int16) {
        if secure && tlsEvent(events) { return }
        if lingerUntil != nil || streaming != nil {
            close()
            return
        }
        if events & roost_bev_event_eof() != 0, handling, let bev {
            // Either a half-close (the answer is still owed and sent if the handler gives one)
            // or a client gone: as Go's server does, the handler is told to stop.
            peerClosed = true
            handlerTask?.cancel()
            bufferevent_disable(bev, roost_ev_read())
            return
        }
        // A client that half-closes after its request still gets the reply it is owed.
        if events & roost_bev_event_eof() != 0, let bev, let output = bufferevent_get_output(bev),
            evbuffer_get_length(output) > 0
        {
            closeAfterWrite = true
            bufferevent_disable(bev, roost_ev_read())
            return
        }
        close()
    }
}
