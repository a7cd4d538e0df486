import CLibEvent
import Dispatch

extension HTTPServer {
    /// The request a head and body make, from a client at `remoteAddress`, as handlers see it.
    func request(from head: RequestHead, body: [UInt8], remoteAddress: String) -> Request {
        var request = Request(
            method: HTTPMethod(rawValue: head.method), target: head.target,
            headers: HTTPHeaders(head.headers.map { ($0.name, $0.value) }), body: body,
            remoteAddress: remoteAddress)
        request.routeMatch = head.route
        if configuration.tls != nil { request.scheme = "https" }
        request.heldBytes = heldBytes
        request.believeForwardingHeaders(from: configuration.trustedProxies)
        return request
    }
}

// The limits a connection shares with the others: request bytes held in memory, and streamed
// bodies (uploads), which are admitted by the responder at their head, counted in the server's
// upload slots, and held to a minimum rate.
extension Connection {
    static let memoryBusy = HTTPProtocolError(
        status: 503, code: .serverBusy,
        message: "The server holds too many request bytes; try again shortly.", retryAfter: 1)

    /// Counts what the parser holds against the server-wide budget; false when it grew past it.
    /// (The first ``ConnectionStateMachine/uncountedHeldBytes`` are not counted: ordinary
    /// requests then never touch the shared counter, whose cache line the loops would otherwise
    /// pass back and forth.)
    @discardableResult
    func chargeHeldBytes() -> Bool {
        let delta = machine.heldBytesDelta()
        guard delta != 0 else { return true }
        return loop.server.heldBytes.charge(delta)
    }

    func releaseHeldBytes() {
        loop.server.heldBytes.release(machine.releaseHeldBytes())
    }

    static let uploadsBusy = HTTPProtocolError(
        status: 503, code: .serverBusy, message: "Too many uploads are in progress; try again shortly.",
        retryAfter: 5)

    /// Asks the responder whether a streamed request (or one with a large buffered body) may
    /// proceed, reading nothing meanwhile: no `100 Continue` and no byte of the body before it is
    /// allowed.
    func admit(_ head: RequestHead) {
        if let bev { bufferevent_disable(bev, roost_ev_read()) }
        let request = makeRequest(head, body: [])
        let responder = loop.server.responder
        let loop = self.loop
        handlerTask = Task(executorPreference: loop) {
            let refusal = await responder.admit(request)
            loop.run { [self] in admitted(head, refusal: refusal) }
        }
    }

    func admitted(_ head: RequestHead, refusal: Response?) {
        loop.preconditionInLoop()
        handlerTask = nil
        guard let bev else { return }
        switch machine.admitted(refused: refusal != nil) {
        case .none:
            return
        case .refuse:
            guard var refusal else { return }
            refusal.headers.set("Connection", "close")
            sendFinal(refusal, request: makeRequest(head, body: []))
        case .readBody:
            // A buffered body: read it now (the body that came with the head is counted as held).
            bufferevent_enable(bev, roost_ev_read())
            processBuffered()
            chargeHeldBytes()
        case .openSink:
            guard let open = loop.server.configuration.bodySinks else {
                return sendError(Self.storageFailure)
            }
            do {
                bodySink = try open(head)
            } catch {
                // A sink may name its own answer (507 when the disk is full); else a 500.
                return sendError((error as? HTTPProtocolError) ?? Self.storageFailure)
            }
            bufferevent_enable(bev, roost_ev_read())
            processBuffered()
        }
    }

    func releaseUploadSlot() {
        guard let client = uploadSlotClient else { return }
        uploadSlotClient = nil
        loop.server.uploads.release(client)
    }

    func makeRequest(_ head: RequestHead, body: [UInt8]) -> Request {
        loop.server.request(from: head, body: body, remoteAddress: remoteAddress)
    }

    /// The client an upload counts against: the socket peer, or the client a trusted proxy names.
    func uploadClient(_ head: RequestHead) -> String {
        guard !loop.server.configuration.trustedProxies.isEmpty else {
            return clientKey(forAddress: remoteAddress)
        }
        return clientKey(forAddress: makeRequest(head, body: []).remoteAddress)
    }

    /// The minimum-rate rule (see ``ConnectionStateMachine/uploadTooSlow(nanoseconds:bytes:readTimeout:minimumRate:)``).
    static func uploadTooSlow(nanoseconds: UInt64, bytes: Int, readTimeout: Int, minimumRate: Int) -> Bool {
        ConnectionStateMachine.uploadTooSlow(
            nanoseconds: nanoseconds, bytes: bytes, readTimeout: readTimeout, minimumRate: minimumRate)
    }
}
