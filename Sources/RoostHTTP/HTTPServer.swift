import CLibEvent
import Foundation
import Synchronization

/// An HTTP/1.1 server: N libevent loops sharing one listening socket.
public final class HTTPServer: Sendable {
    /// Everything that can be tuned about the server.
    public struct Configuration: Sendable {
        public var host: String
        /// The TCP port; 0 picks a free one (see ``HTTPServer/port``).
        public var port: Int
        /// How many event-loop threads to run.
        public var loopCount: Int
        public var limits: RequestLimits
        /// Seconds a request may take to arrive once its first byte did.
        public var readTimeout: Int
        /// Seconds a keep-alive connection may wait for its next request.
        public var idleTimeout: Int
        /// Seconds a stalled response write may take before the connection is dropped.
        public var writeTimeout: Int
        /// Renders protocol errors (413, 431, 408, ...) in the application's error shape.
        public var errorBody: @Sendable (HTTPProtocolError) -> Response
        /// Receives one line per request; nil turns the access log off.
        public var accessLog: AccessLog?
        /// Opens a sink for a request whose body is streamed (see ``RequestLimits/streamedBodyLimit``).
        public var bodySinks: (@Sendable (RequestHead) throws -> any RequestBodySink)?
        /// Bytes of answers a connection may have waiting to be sent: above it the connection
        /// stops reading and starting handlers until half of them are sent.
        public var maxUnsentBytes = 2 << 20
        /// Open connections at most; one more is answered 503 `server_busy` and closed. Nil takes
        /// 10,000, or less when the descriptor limit is lower (the limit less 128).
        public var maxConnections: Int?
        /// Open connections from one client address at most (an IPv6 /64 as one), so that one
        /// address cannot hold every slot with idle sockets or slow handshakes; one more is
        /// answered 503 `server_busy` and closed. Trusted proxies' connections are not counted.
        public var maxConnectionsPerClient = 256
        /// Streamed bodies (uploads) received at once, in all and from one client address:
        /// 503 `server_busy` with `Retry-After` beyond.
        public var maxUploads = 64
        public var maxUploadsPerClient = 4
        /// Bytes per second a streamed body must average once `readTimeout` seconds have passed:
        /// 408 `request_timeout` below.
        public var minimumUploadRate = 1024
        /// Bytes of requests (heads, buffered bodies, pipelined requests) all connections may
        /// hold in memory together, beyond the first 16 KiB of each: a connection that takes more
        /// is answered 503 `server_busy`.
        public var maxHeldRequestBytes = 256 << 20
        /// Proxies whose forwarding headers name the client (see ``TrustedProxies``); none by default.
        public var trustedProxies = TrustedProxies()
        /// Where the server's own warnings go (accept failures).
        public var logger = Logger()
        /// Speak TLS with this certificate instead of plain HTTP.
        public var tls: TLSContext?
        /// Seconds a TLS handshake may take from the accept (`readTimeout` when that is shorter):
        /// a handshake costs the server more than an idle socket, and a client needs far less.
        public var tlsHandshakeTimeout = 10
        /// The `Strict-Transport-Security` value sent on every answer over TLS; nil sends none.
        public var strictTransportSecurity: String? = "max-age=31536000"

        public init(
            host: String = "127.0.0.1", port: Int = 8080,
            loopCount: Int = ProcessInfo.processInfo.activeProcessorCount,
            limits: RequestLimits = RequestLimits(), readTimeout: Int = 30, idleTimeout: Int = 60,
            writeTimeout: Int = 60, accessLog: AccessLog? = nil,
            errorBody: @escaping @Sendable (HTTPProtocolError) -> Response = HTTPServer.defaultErrorBody
        ) {
            self.host = host
            self.port = port
            self.loopCount = max(1, loopCount)
            self.limits = limits
            self.readTimeout = readTimeout
            self.idleTimeout = idleTimeout
            self.writeTimeout = writeTimeout
            self.accessLog = accessLog
            self.errorBody = errorBody
            bodySinks = nil
        }
    }

    /// The JSON error shape of DESIGN.md, for errors raised below the application.
    public static let defaultErrorBody: @Sendable (HTTPProtocolError) -> Response = { error in
        var body: [UInt8] = Array("{\"status\":\(error.status),\"code\":\"\(error.code)\",\"message\":".utf8)
        body.append(contentsOf: jsonQuoted(error.message))
        body.append(contentsOf: Array(",\"details\":{}}".utf8))
        var response = Response.json(error.status, body)
        if let seconds = error.retryAfter { response.headers.set("Retry-After", String(seconds)) }
        return response
    }

    public let configuration: Configuration
    let responder: any Responder
    /// Request, latency and connection counters for `/metrics`.
    public let metrics: HTTPMetrics
    private let state = Mutex<State>(State())
    /// Uploads in flight, per client address and in all.
    let uploads = ClientSlots()
    /// Bytes of requests all connections and handlers hold now (see
    /// ``Configuration/maxHeldRequestBytes``); handlers reach it as ``Request/heldBytes``.
    public let heldBytes: HeldBytes
    /// Open connections per client address (see ``Configuration/maxConnectionsPerClient``).
    let connectionsPerClient = ClientSlots()
    /// The cap on open connections in force, set at start.
    private let connectionCap = Atomic<Int>(Int.max)
    /// Failed accepts and failed TLS handshakes: one log line a minute, not one per attempt.
    private let acceptWarning = RateLimitedWarning()
    private let handshakeWarning = RateLimitedWarning()
    /// The `Strict-Transport-Security` header line, over TLS only.
    let strictTransportSecurityLine: String?
    /// The answers to a connection beyond the cap, in all and per client, rendered once.
    private let refusal: [UInt8]
    private let clientRefusal: [UInt8]
    /// How long accepting pauses after it failed.
    static let acceptPauseMilliseconds = 100

    private struct State: @unchecked Sendable {
        // @unchecked: EventLoop is Sendable; the array is only touched under the mutex.
        var loops: [EventLoop] = []
        var socket: Int32 = -1
        var port = 0
    }

    public init(configuration: Configuration, responder: any Responder, metrics: HTTPMetrics = HTTPMetrics())
    {
        self.configuration = configuration
        heldBytes = HeldBytes(limit: configuration.maxHeldRequestBytes)
        self.metrics = metrics
        self.responder = responder
        strictTransportSecurityLine =
            configuration.tls == nil
            ? nil : configuration.strictTransportSecurity.map { "Strict-Transport-Security: \($0)\r\n" }
        refusal = Self.serializedRefusal(
            HTTPProtocolError(
                status: 503, code: .serverBusy,
                message: "The server has too many open connections; try again shortly.", retryAfter: 1),
            rendered: configuration.errorBody)
        clientRefusal = Self.serializedRefusal(
            HTTPProtocolError(
                status: 503, code: .serverBusy,
                message: "Too many connections are open from your address; close some or try again shortly.",
                retryAfter: 5),
            rendered: configuration.errorBody)
    }

    /// The running loops; empty before start and after shutdown.
    var runningLoops: [EventLoop] { state.withLock { $0.loops } }

    /// The loop holding the fewest connections: `preferred` (the one that accepted) unless
    /// another holds fewer.
    func loopForConnection(preferring preferred: EventLoop) -> EventLoop {
        var best = preferred
        var fewest = preferred.held.load(ordering: .relaxed)
        for loop in runningLoops {
            let held = loop.held.load(ordering: .relaxed)
            if held < fewest { (best, fewest) = (loop, held) }
        }
        return best
    }

    /// Connections each loop holds or is about to take, in the loops' order.
    var connectionsPerLoop: [Int] { runningLoops.map { $0.held.load(ordering: .relaxed) } }

    /// The port the server listens on, once started.
    public var port: Int { state.withLock { $0.port } }

    /// Binds the socket and starts the loops; returns once the server accepts connections.
    public func start() throws {
        Self.prepareProcess
        let descriptors = Self.raiseDescriptorLimit()
        connectionCap.store(
            configuration.maxConnections ?? max(16, min(10_000, descriptors - 128)), ordering: .relaxed)
        let socket = try Self.listeningSocket(host: configuration.host, port: configuration.port)
        var loops: [EventLoop] = []
        do {
            for index in 0..<configuration.loopCount {
                let loop = try EventLoop(index: index, server: self)
                try loop.listen(on: socket)
                loops.append(loop)
            }
        } catch {
            close(socket)
            throw error
        }
        let port = Self.boundPort(socket)
        state.withLock {
            $0.loops = loops
            $0.socket = socket
            $0.port = port
        }
        for loop in loops { loop.start() }
    }

    /// Stops accepting, lets requests in flight finish (up to `gracePeriod` seconds), then stops.
    public func shutdown(gracePeriod: Double = 10) async {
        let loops = state.withLock { $0.loops }
        for loop in loops { loop.beginDraining() }
        let deadline = Date().addingTimeInterval(gracePeriod)
        while metrics.openConnections > 0 && Date() < deadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        for loop in loops { await loop.stop() }
        state.withLock {
            if $0.socket >= 0 { close($0.socket) }
            $0.socket = -1
            $0.loops = []
        }
        configuration.accessLog?.flush()
    }

    func observe(request: Request, response: Response, bytesSent: Int, microseconds: UInt64, loop: Int) {
        metrics.record(
            route: response.route ?? "unmatched", status: response.status, microseconds: microseconds,
            shard: loop)
        configuration.accessLog?.record(
            method: request.method.rawValue, target: request.target, remoteAddress: request.remoteAddress,
            requestID: response.headers[AccessLog.requestIDHeader], status: response.status, bytes: bytesSent,
            microseconds: microseconds)
    }

    /// Open connections at most (see ``Configuration/maxConnections``).
    public var connectionLimit: Int { connectionCap.load(ordering: .relaxed) }

    /// What a connection from `peer` counts against in ``connectionsPerClient``: its client key,
    /// or nil for a trusted proxy, whose connections carry many clients.
    func connectionClient(_ peer: String) -> String? {
        configuration.trustedProxies.contains(peer) ? nil : clientKey(forAddress: peer)
    }

    /// Answers a connection beyond the cap (in all, or from its client) and closes it, without
    /// a connection object.
    func refuseConnection(_ fd: Int32, perClient: Bool = false) {
        // Over TLS a plaintext answer would be garbage to the client, and a handshake is the
        // very cost the cap saves.
        if configuration.tls == nil {
            _ = (perClient ? clientRefusal : refusal).withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
        }
        close(fd)
    }

    /// Logs a failed accept once a minute at most, however often it fails.
    func warnAcceptFailure(_ error: Int32) {
        guard let suppressed = acceptWarning.admit() else { return }
        let reason = String(cString: strerror(error))
        let hint =
            error == EMFILE || error == ENFILE
            ? " (open descriptors at the limit; raise 'ulimit -n' or lower --max-connections)" : ""
        let repeats = suppressed > 0 ? "; \(suppressed) more failures in the last minute" : ""
        configuration.logger.warn(
            "cannot accept connections: \(reason)\(hint); pausing accepts for \(Self.acceptPauseMilliseconds) ms\(repeats)"
        )
    }

    /// Logs a failed TLS handshake once a minute at most, however many fail.
    func warnHandshakeFailure(_ remoteAddress: String, reason: String) {
        guard let suppressed = handshakeWarning.admit() else { return }
        let repeats = suppressed > 0 ? "; \(suppressed) more failed in the last minute" : ""
        FileHandle.standardError.write(
            Data("roost: TLS handshake with \(remoteAddress) failed: \(reason)\(repeats)\n".utf8))
    }

    /// Raises the soft descriptor limit to the hard one; returns the limit in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    private static func serializedRefusal(
        _ error: HTTPProtocolError, rendered errorBody: (HTTPProtocolError) -> Response
    ) -> [UInt8] {
        let response = errorBody(error)
        var head = "HTTP/1.1 \(response.status) \(Response.reasonPhrase(for: response.status))\r\n"
        // One answer for every refused connection: a request id would be the same on all of them.
        for field in response.headers
        where !field.name.caseInsensitiveEquals("content-length")
            && !field.name.caseInsensitiveEquals(AccessLog.requestIDHeader)
            && !field.name.caseInsensitiveEquals("retry-after")
        {
            head += "\(field.name): \(field.value)\r\n"
        }
        head +=
            "Content-Length: \(response.body.count)\r\nRetry-After: \(error.retryAfter ?? 1)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + response.body
    }

    private static let prepareProcess: Void = {
        signal(SIGPIPE, SIG_IGN)
        evthread_use_pthreads()
    }()

    private static func listeningSocket(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else {
            throw HTTPServerError(
                message: "cannot resolve the host '\(host)'; use an IP address such as 127.0.0.1")
        }
        defer { freeaddrinfo(results) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else {
            throw HTTPServerError(message: "cannot create a socket: \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            close(fd)
            let hint =
                switch code {
                case EADDRINUSE: "; is another server using that port?"
                case EACCES where port < 1024:
                    "; ports below 1024 need root or CAP_NET_BIND_SERVICE (see deploy/roost.service), or use a port from 1024 up behind a proxy"
                case EADDRNOTAVAIL: "; no interface of this machine has that address (--host)"
                default: ""
                }
            throw HTTPServerError(message: "cannot listen on \(host):\(port): \(reason)\(hint)")
        }
        guard listen(fd, 1024) == 0, evutil_make_socket_nonblocking(fd) == 0 else {
            close(fd)
            throw HTTPServerError(
                message: "cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
        _ = evutil_make_socket_closeonexec(fd)
        return fd
    }

    private static func boundPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        let family = storage.ss_family
        return withUnsafePointer(to: storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
    }
}

/// Quotes a string as JSON, for the few places below the JSON module that write JSON.
func jsonQuoted(_ text: String) -> [UInt8] {
    var output: [UInt8] = [UInt8(ascii: "\"")]
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
        case 0..<0x20: output += Array(String(format: "\\u%04x", byte).utf8)
        default: output.append(byte)
        }
    }
    output.append(UInt8(ascii: "\""))
    return output
}
