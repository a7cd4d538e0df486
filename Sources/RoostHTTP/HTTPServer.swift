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
        return Response.json(error.status, body)
    }

    public let configuration: Configuration
    let responder: any Responder
    /// Request, latency and connection counters for `/metrics`.
    public let metrics: HTTPMetrics
    private let state = Mutex<State>(State())

    private struct State: @unchecked Sendable {
        // @unchecked: EventLoop is Sendable; the array is only touched under the mutex.
        var loops: [EventLoop] = []
        var socket: Int32 = -1
        var port = 0
    }

    public init(configuration: Configuration, responder: any Responder, metrics: HTTPMetrics = HTTPMetrics())
    {
        self.configuration = configuration
        self.metrics = metrics
        self.responder = responder
    }

    /// The port the server listens on, once started.
    public var port: Int { state.withLock { $0.port } }

    /// Binds the socket and starts the loops; returns once the server accepts connections.
    public func start() throws {
        Self.prepareProcess
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
            status: response.status, bytes: bytesSent, microseconds: microseconds)
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
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HTTPServerError(
                message: "cannot listen on \(host):\(port): \(reason); is another server using that port?")
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
