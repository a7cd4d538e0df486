import CLibEvent

// Final answers: a protocol error, or a refusal that closes the connection without reading the
// rest of the request.
extension Connection {
    func sendError(_ error: HTTPProtocolError) {
        var response = loop.server.configuration.errorBody(error)
        response.headers.set("Connection", "close")
        sendFinal(
            response,
            request: Request(method: HTTPMethod(rawValue: "-"), target: "-", remoteAddress: remoteAddress))
    }

    /// Answers and closes without reading further: a body still on its way is never stored.
    func sendFinal(_ response: Response, request: Request) {
        loop.preconditionInLoop()
        guard bev != nil, machine.refusing() else { return }
        bodySink?.discard()
        bodySink = nil
        releaseUploadSlot()
        releaseHeldBytes()
        let bytes = serialize(response, omitBody: false, keepAlive: false)
        // Counted before the write, which may reach the client at once.
        loop.server.observe(
            request: request, response: response, bytesSent: bytes.count, microseconds: 0, loop: loop.index)
        write(bytes)
        // `write` closes the connection when the socket failed.
        if let bev { bufferevent_disable(bev, roost_ev_read()) }
        drainedIfFlushed()
    }
}
