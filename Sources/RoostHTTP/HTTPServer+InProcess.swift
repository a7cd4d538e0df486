import Dispatch
import Glibc

// One request answered without a socket, for tests: the bytes go through the same parser,
// limits, routing at the head, admission, body sink, responder chain and wire format as a
// connection's, so an API test checks the same answer it would get over TCP. What only a
// connection does (timeouts, keep-alive, pipelining, back-pressure, upload slots, TLS, streamed
// answers) is left to the tests that use a real socket.
extension HTTPServer {
    /// Answers the request in `bytes` (one whole request) as a connection from `remoteAddress`
    /// would: the wire bytes of the answer, `Connection: close` included. A streamed answer
    /// (`ResponseStream`) cannot be carried this way and is answered 501.
    @_spi(Testing) public func exchange(_ bytes: [UInt8], from remoteAddress: String = "127.0.0.1") async
        -> [UInt8]
    {
        // On a loop of the server's, as a connection's handler runs: code that relies on being on
        // one (reads answered inline, loop checks) behaves as it does for a socket.
        let loops = runningLoops
        guard !loops.isEmpty else {
            return refusal(
                HTTPProtocolError(
                    status: 503, code: .shuttingDown, message: "The server is not running.", retryAfter: 1))
        }
        let loop = loops[Int.random(in: 0..<loops.count)]
        return await Task(executorPreference: loop) {
            await self.exchangeOnLoop(bytes, from: remoteAddress)
        }.value
    }

    private func exchangeOnLoop(_ bytes: [UInt8], from remoteAddress: String) async -> [UInt8] {
        var parser = RequestParser(limits: configuration.limits)
        parser.append(bytes)
        var sink: (any RequestBodySink)?
        while true {
            switch parser.next() {
            case .needMore:
                sink?.discard()
                return refusal(
                    HTTPProtocolError(
                        status: 400, code: .invalidRequest,
                        message: "The request ended before it was complete."))
            case .failure(let error):
                sink?.discard()
                return refusal(error)
            case .bodyStart(let head):
                if let refused = await responder.admit(
                    request(from: head, body: [], remoteAddress: remoteAddress))
                {
                    return wire(refused, for: head, keepAlive: false)
                }
            case .streamStart(let head):
                if let refused = await responder.admit(
                    request(from: head, body: [], remoteAddress: remoteAddress))
                {
                    return wire(refused, for: head, keepAlive: false)
                }
                guard let open = configuration.bodySinks else { return refusal(Connection.storageFailure) }
                do {
                    sink = try open(head)
                } catch {
                    return refusal((error as? HTTPProtocolError) ?? Connection.storageFailure)
                }
            case .bodyPart(let part):
                await write(part, to: sink)
            case .request(let head, let body):
                return await answer(head, body: body, sink: sink, remoteAddress: remoteAddress)
            }
        }
    }

    private func answer(
        _ head: RequestHead, body: [UInt8], sink: (any RequestBodySink)?, remoteAddress: String
    )
        async -> [UInt8]
    {
        let started = DispatchTime.now().uptimeNanoseconds
        var request = request(from: head, body: body, remoteAddress: remoteAddress)
        var response: Response
        do {
            request.streamedBody = try await sink?.finish()
            response = await responder.respond(to: request)
        } catch let error as HTTPProtocolError {
            response = configuration.errorBody(error)
        } catch {
            response = configuration.errorBody(Connection.storageFailure)
        }
        if let streamed = request.streamedBody { unlink(streamed.path) }
        if let stream = response.stream {
            stream.end()
            response = configuration.errorBody(
                HTTPProtocolError(
                    status: 501, code: .notImplemented,
                    message: "A streamed answer needs a real connection; test it over a socket."))
        }
        var bytes = wire(response, for: head, keepAlive: false)
        if let file = response.file, request.method != .head {
            bytes += Self.contents(of: file)
        }
        observe(
            request: request, response: response, bytesSent: bytes.count,
            microseconds: RoostHTTP.elapsed(since: started, now: DispatchTime.now().uptimeNanoseconds) / 1000,
            loop: 0)
        return bytes
    }

    /// A sink pushes back when it falls behind; the exchange waits as a connection would.
    private func write(_ part: ArraySlice<UInt8>, to sink: (any RequestBodySink)?) async {
        guard let sink, !sink.write(part) else { return }
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            sink.whenReady { ready.resume() }
        }
    }

    private func refusal(_ error: HTTPProtocolError) -> [UInt8] {
        var response = configuration.errorBody(error)
        response.headers.set("Connection", "close")
        return response.wireBytes(
            omitBody: false, keepAlive: false, date: HTTPDateCache().current,
            strictTransportSecurityLine: strictTransportSecurityLine)
    }

    private func wire(_ response: Response, for head: RequestHead, keepAlive: Bool) -> [UInt8] {
        response.wireBytes(
            omitBody: head.method == "HEAD", keepAlive: keepAlive, date: HTTPDateCache().current,
            strictTransportSecurityLine: strictTransportSecurityLine)
    }

    /// What a connection would `sendfile`.
    private static func contents(of file: ResponseFile) -> [UInt8] {
        let descriptor = file.take()
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: file.length)
        var done = 0
        while done < file.length {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, file.length - done, off_t(file.offset + done))
            }
            guard count > 0 else { break }
            done += count
        }
        return Array(bytes.prefix(done))
    }
}
