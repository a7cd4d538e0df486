import CLibEvent
import Dispatch
import Glibc
import RoostThreads

/// One client connection: reads requests, hands each to the responder, writes the reply.
///
/// Requests on a connection are answered in order, one at a time. While a handler runs the
/// connection keeps reading (to notice a close, which cancels the handler's task) but stops once
/// a pipelining client has sent more than ``pipelineBufferLimit`` bytes ahead, and it neither
/// reads nor starts a handler while more than ``HTTPServer/Configuration/maxUnsentBytes`` of its
/// answers wait to be sent. A streamed body is admitted by the responder when its head arrives,
/// holds one of the server's upload slots, and must keep up a minimum rate.
// @unchecked Sendable: every property is used on the owning loop's thread only (asserted in debug
// builds by `loop.preconditionInLoop()` at each entry point); handler tasks come back through
// `loop.execute`.
final class Connection: @unchecked Sendable {
    // Strong: the loop drops the connection on close, which breaks the cycle.
    let loop: EventLoop
    var bev: OpaquePointer?
    /// Where the connection is in its life (see ConnectionStateMachine.swift); what follows are
    /// the resources its states hold.
    var machine: ConnectionStateMachine
    let remoteAddress: String
    /// Where the body of the request being received goes, when its route streams bodies.
    var bodySink: (any RequestBodySink)?
    /// The task running the current handler or admission check; cancelled when the client goes.
    var handlerTask: Task<Void, Never>?
    /// The client whose upload slot (in the server's upload ``ClientSlots``) this connection holds.
    var uploadSlotClient: String?
    /// Over TLS (see Connection+TLS.swift): bytes go through OpenSSL, never straight to the socket.
    let secure: Bool
    /// The response being streamed (see Connection+Streaming.swift); the connection ends with it.
    var streaming: ResponseStream?

    init?(fd: Int32, remoteAddress: String, loop: EventLoop) {
        let configuration = loop.server.configuration
        secure = configuration.tls != nil
        guard let bev = Self.makeBufferEvent(fd: fd, loop: loop) else { return nil }
        self.bev = bev
        self.loop = loop
        self.remoteAddress = remoteAddress
        machine = ConnectionStateMachine(
            secure: secure, limits: configuration.limits,
            timeouts: .init(
                read: configuration.readTimeout, idle: configuration.idleTimeout,
                handshake: configuration.tlsHandshakeTimeout,
                minimumUploadRate: configuration.minimumUploadRate),
            now: DispatchTime.now().uptimeNanoseconds)
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev,
            { _, context in Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().readable() },
            { _, context in Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().drained() },
            { _, events, context in
                Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().failed(events)
            },
            context)
        var writeTimeout = timeval(tv_sec: configuration.writeTimeout, tv_usec: 0)
        bufferevent_set_timeouts(bev, nil, &writeTimeout)
        bufferevent_enable(bev, roost_ev_read() | roost_ev_write())
    }

    /// Whether the connection waits for a request with none of it received.
    var isIdle: Bool { machine.isIdle }

    /// Whether reading waits for the client to read the answers already sent.
    var awaitsClient: Bool { machine.state == .waitingForDrain }

    /// Closes now, dropping unsent output; `sessionFailed`: TLS failed, so no close_notify.
    func close(sessionFailed: Bool = false) {
        loop.preconditionInLoop()
        streaming?.end()
        streaming = nil
        bodySink?.discard()
        bodySink = nil
        releaseUploadSlot()
        releaseHeldBytes()
        // A handler still running works for nobody now.
        handlerTask?.cancel()
        handlerTask = nil
        let mayNotify = machine.close() && !sessionFailed
        guard let bev else { return }
        if mayNotify { sayGoodbye() }
        bufferevent_free(bev)
        self.bev = nil
        loop.remove(self)
    }

    /// Closes connections that idle too long or send a request too slowly.
    func checkDeadline(now: UInt64) {
        loop.preconditionInLoop()
        switch machine.deadline(now: now) {
        case .none:
            return
        case .close:
            close()
        case .handshakeTimedOut(let timeout):
            loop.server.warnHandshakeFailure(remoteAddress, reason: "not finished within \(timeout) s")
            close(sessionFailed: true)
        case .uploadTooSlow:
            sendError(
                HTTPProtocolError(
                    status: 408, code: .requestTimeout,
                    message:
                        "The upload arrived slower than \(loop.server.configuration.minimumUploadRate) bytes per second; send it again."
                ))
        case .requestTimedOut:
            sendError(
                HTTPProtocolError(
                    status: 408, code: .requestTimeout,
                    message: "The request was not received in time; send it again."))
        }
    }

    private func readable() {
        loop.preconditionInLoop()
        guard let bev, let input = bufferevent_get_input(bev) else { return }
        let length = evbuffer_get_length(input)
        guard length > 0 else { return }
        defer { evbuffer_drain(input, length) }
        guard let bytes = evbuffer_pullup(input, -1),
            machine.received(
                UnsafeRawBufferPointer(start: bytes, count: length), now: DispatchTime.now().uptimeNanoseconds
            )
        else { return }
        guard chargeHeldBytes() else { return sendError(Self.memoryBusy) }
        switch machine.afterRead() {
        case .parse:
            processBuffered()
            chargeHeldBytes()
        case .pauseReading:
            bufferevent_disable(bev, roost_ev_read())
        case .none:
            break
        }
    }

    func processBuffered() {
        loop.preconditionInLoop()
        while bev != nil {
            switch machine.nextRequestEvent(now: DispatchTime.now().uptimeNanoseconds) {
            case .wait:
                return
            case .sendContinue:
                write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                return
            case .fail(let error):
                return sendError(error)
            case .admit(let head, let upload):
                if upload {
                    let configuration = loop.server.configuration
                    let client = uploadClient(head)
                    guard
                        loop.server.uploads.acquire(
                            client, total: configuration.maxUploads,
                            perClient: configuration.maxUploadsPerClient)
                    else { return sendError(Self.uploadsBusy) }
                    uploadSlotClient = client
                }
                // A large buffered body: whoever may not send it is refused before it is read.
                return admit(head)
            case .bodyPart(let bytes):
                guard let sink = bodySink, !sink.write(bytes), let bev else { continue }
                machine.sinkBackedUp()
                bufferevent_disable(bev, roost_ev_read())
                let loop = self.loop
                sink.whenReady { loop.execute { [self] in sinkCaughtUp() } }
                return
            case .dispatch(let head, let body):
                let sink = bodySink
                bodySink = nil
                releaseUploadSlot()
                dispatch(head, body: body, sink: sink)
                return
            }
        }
    }

    private func sinkCaughtUp() {
        guard machine.sinkCaughtUp() else { return }
        if let bev { bufferevent_enable(bev, roost_ev_read()) }
        processBuffered()
    }

    static let storageFailure = HTTPProtocolError(
        status: 500, code: .internalError, message: "The request body could not be stored; try again later.")

    private func dispatch(_ head: RequestHead, body: [UInt8], sink: (any RequestBodySink)?) {
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
        loop.preconditionInLoop()
        handlerTask = nil
        let answer = machine.answerReady(
            hasStream: response.stream != nil, headOnly: request.method == .head,
            keepAlive: keepAlive && !loop.isDraining && !response.headers.contains("Connection"))
        let keepOpen: Bool
        switch answer {
        case .drop:
            // The client went away while the handler ran; its answer has nowhere to go.
            response.stream?.end()
            return
        case .stream:
            return startStream(response.stream!, request, response, started: started)
        case .send(let keepAlive):
            // HEAD of a streamed answer: only the head goes.
            response.stream?.end()
            keepOpen = keepAlive
        }
        let bytes = serialize(response, omitBody: request.method == .head, keepAlive: keepOpen)
        var now = DispatchTime.now().uptimeNanoseconds
        // Counted before the write, which may reach the client at once: a client that reads
        // /metrics after its answer must find that answer counted.
        loop.server.observe(
            request: request, response: response, bytesSent: bytes.count,
            microseconds: RoostHTTP.elapsed(since: started, now: now) / 1000, loop: loop.index)
        write(bytes)
        if DeliveryTrace.isEnabled, request.method == .post {
            DeliveryTrace.record(.commitToAnswer, since: DeliveryTrace.lastCommit.load(ordering: .relaxed))
        }
        var fileSent = true
        if let file = response.file, request.method != .head, let bev,
            let output = bufferevent_get_output(bev)
        {
            // sendfile from the page cache: the bytes never pass through this process's memory.
            let descriptor = file.take()
            if descriptor < 0
                || evbuffer_add_file(output, descriptor, Int64(file.offset), Int64(file.length)) != 0
            {
                if descriptor >= 0 { Glibc.close(descriptor) }
                fileSent = false
            }
        }
        now = DispatchTime.now().uptimeNanoseconds
        // `write` closes the connection when the socket failed.
        guard let bev else { return }
        let maxUnsentBytes = loop.server.configuration.maxUnsentBytes
        let overBound = evbuffer_get_length(bufferevent_get_output(bev)) > maxUnsentBytes
        switch machine.answerSent(keepAlive: keepOpen && fileSent, overBound: overBound, now: now) {
        case .none:
            return
        case .closeWhenFlushed:
            drainedIfFlushed()
        case .waitForDrain:
            // Resumed by `drained` once the output is down to half the bound.
            bufferevent_setwatermark(bev, roost_ev_write(), maxUnsentBytes / 2, 0)
            bufferevent_disable(bev, roost_ev_read())
        case .next(let resumeReading):
            if resumeReading { bufferevent_enable(bev, roost_ev_read()) }
            processBuffered()
            chargeHeldBytes()
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
        loop.preconditionInLoop()
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

    private func drained() {
        loop.preconditionInLoop()
        streaming?.outputChanged(0)
        guard let bev else { return }
        switch machine.drained(now: DispatchTime.now().uptimeNanoseconds) {
        case .none:
            return
        case .resumeReading:
            bufferevent_setwatermark(bev, roost_ev_write(), 0, 0)
            bufferevent_enable(bev, roost_ev_read())
            processBuffered()
        case .close:
            close()
        case .linger:
            sayGoodbye()
            shutdown(bufferevent_getfd(bev), Int32(SHUT_WR))
            bufferevent_enable(bev, roost_ev_read())
        }
    }

    private func failed(_ events: Int16) {
        loop.preconditionInLoop()
        if secure && tlsEvent(events) { return }
        guard let bev else { return }
        // An error (a reset, a TLS failure) ends the connection whatever it was doing.
        guard events & roost_bev_event_error() == 0 else { return close(sessionFailed: secure) }
        let outputPending = bufferevent_get_output(bev).map { evbuffer_get_length($0) > 0 } ?? false
        switch machine.failed(eof: events & roost_bev_event_eof() != 0, outputPending: outputPending) {
        case .close:
            close()
        case .cancelHandler:
            // Either a half-close (the answer is still owed and sent if the handler gives one)
            // or a client gone: as Go's server does, the handler is told to stop.
            handlerTask?.cancel()
            bufferevent_disable(bev, roost_ev_read())
        case .closeWhenFlushed:
            // A client that half-closes after its request still gets the reply it is owed.
            bufferevent_disable(bev, roost_ev_read())
        }
    }
}
