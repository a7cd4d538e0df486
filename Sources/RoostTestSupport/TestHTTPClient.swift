import Foundation

/// A response as the test client read it off the wire.
public struct TestResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    /// The first header value with this name, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.name.lowercased() == name.lowercased() })?.value
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object, or an empty dictionary.
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) as? [String: Any]
            ?? [:]
    }
}

/// Why the test client gave up.
public struct TestClientError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A blocking TCP connection for tests that need byte-level control: raw requests, slow sends,
/// pipelining, checking whether the server closed.
public final class RawConnection: @unchecked Sendable {
    // @unchecked Sendable: each test uses a connection from one thread at a time.
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:port, with a receive timeout so a test never hangs; `source` is the
    /// client's own address, another loopback one such as 127.0.0.2 to be a second client.
    public init(port: Int, timeout: Double = 10, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw TestClientError(description: "cannot bind to \(source)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: a class whose init throws after setting every property still runs
        // deinit, which closes the socket; closing twice could close another thread's new socket.
        guard status == 0 else { throw TestClientError(description: "cannot connect to port \(port)") }
        setTimeout(timeout)
    }

    /// A "connection" that has already received `answer` and then closed: reads parse it as
    /// they parse a socket's bytes.
    public init(received answer: [UInt8]) {
        fd = -1
        buffer = answer
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Changes how long a read may wait.
    public func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends bytes; false if the server has closed the connection.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Sends text.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Hangs up both ways now, as a client that goes away does; the descriptor closes at deinit.
    public func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Whether the server closed the connection within `timeout` seconds (reads and drops data).
    public func waitForClose(timeout: Double) -> Bool {
        setTimeout(timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads one response; `head` skips the body (for HEAD requests).
    public func readResponse(head: Bool = false) throws -> TestResponse {
        let headEnd = try readUntil([13, 10, 13, 10])
        let headText = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestClientError(description: "bad status line: \(headText.prefix(80))")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        let response = { (body: [UInt8]) in TestResponse(status: status, headers: headers, body: body) }
        if head || status == 204 || status == 304 || (100..<200).contains(status) { return response([]) }
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({
            Int($0.value)
        }) {
            try fill(length)
            let body = Array(buffer[0..<length])
            buffer.removeFirst(length)
            return response(body)
        }
        _ = waitForClose(timeout: 10)
        let body = buffer
        buffer = []
        return response(body)
    }

    /// Reads a response's head and counts its body without keeping it: for very large bodies.
    /// Returns the status, the headers and how many body bytes arrived.
    public func drainResponse() throws -> (
        status: Int, headers: [(name: String, value: String)], bodyBytes: Int
    ) {
        let head = try readResponse(head: true)
        var remaining =
            head.headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap { Int($0.value) }
            ?? 0
        var received = min(remaining, buffer.count)
        buffer.removeFirst(received)
        remaining -= received
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while remaining > 0 {
            let count = recv(fd, &chunk, min(chunk.count, remaining), 0)
            if count <= 0 { break }
            received += count
            remaining -= count
        }
        return (head.status, head.headers, received)
    }

    /// ``readResponse(head:)`` off Swift's cooperative threads, which the server under test needs.
    public func response(head: Bool = false) async throws -> TestResponse {
        try await offCooperativePool { try self.readResponse(head: head) }
    }

    /// ``waitForClose(timeout:)`` off Swift's cooperative threads.
    public func closed(within timeout: Double) async -> Bool {
        (try? await offCooperativePool { self.waitForClose(timeout: timeout) }) ?? false
    }

    /// What has arrived and not been read yet, waiting for more when nothing has; nil once the
    /// server closed the connection with nothing left to read.
    public func receiveChunk() throws -> [UInt8]? {
        if buffer.isEmpty {
            do { try receiveMore() } catch let error as TestClientError
                where error.description.contains("closed")
            {
                return nil
            }
        }
        defer { buffer = [] }
        return buffer
    }

    private func receiveMore() throws {
        // Large reads: a test reading an event of megabytes must keep up with the server.
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count == 0 { throw TestClientError(description: "the server closed the connection") }
        if count < 0 { throw TestClientError(description: "read failed or timed out (errno \(errno))") }
        buffer.append(contentsOf: chunk[0..<count])
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for index in searchFrom...(buffer.count - marker.count)
                where buffer[index..<index + marker.count].elementsEqual(marker) {
                    return index
                }
                searchFrom = buffer.count - marker.count + 1
            }
            try receiveMore()
        }
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count { try receiveMore() }
    }
}

/// A simple HTTP client over ``RawConnection``: one connection per request, blocking I/O kept off
/// Swift's cooperative threads so a test cannot starve the server it talks to.
public struct TestHTTPClient: Sendable {
    public let port: Int
    /// Answers requests without a socket when set (see ``TestTransport``).
    let exchange: (@Sendable ([UInt8]) async -> [UInt8])?
    /// How long a response may take. Generous: a login on a real binary hashes with Argon2id on
    /// low-priority threads, which a machine busy with the whole parallel suite can hold back for
    /// seconds; a request that truly hangs still fails.
    public var timeout: Double = 30

    /// A client that connects to `port` for every request.
    public init(port: Int) {
        self.port = port
        exchange = nil
    }

    /// A client whose requests go through `exchange` as wire bytes, no socket between; `port`
    /// is the server's, for tests that also open connections of their own.
    public init(port: Int, exchange: @escaping @Sendable ([UInt8]) async -> [UInt8]) {
        self.port = port
        self.exchange = exchange
    }

    /// Whether requests skip the socket.
    public var isInProcess: Bool { exchange != nil }

    /// Sends a request and reads the response.
    public func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> TestResponse {
        let (port, timeout) = (self.port, self.timeout)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + (body ?? [])
        if let exchange {
            return try RawConnection(received: await exchange(request)).readResponse(head: method == "HEAD")
        }
        return try await offCooperativePool {
            let connection = try RawConnection(port: port, timeout: timeout)
            connection.send(request)
            return try connection.readResponse(head: method == "HEAD")
        }
    }

    /// Sends a JSON body given as text.
    public func send(_ method: String, _ path: String, json: String, headers: [(String, String)] = [])
        async throws -> TestResponse
    {
        try await send(
            method, path, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }
}

/// Runs blocking work on a thread of its own, so tests never starve the server's handlers.
/// (Dispatch's global queue has about one thread per core on Linux, so it would starve too.)
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A loopback port nobody listens on now: bound, read back and released (another process could
/// take it before the caller does; tests use it for servers that cannot be given port 0).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestClientError(description: "no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
