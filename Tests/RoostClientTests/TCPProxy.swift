import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of a server, whose connections a test can cut: what a
/// phone losing its network does to an open stream, without stopping the server.
final class TCPProxy: @unchecked Sendable {
    // @unchecked Sendable: `open` and `refusing` are only touched with `lock` held; each pump
    // thread owns its two descriptors until both directions have ended.
    private let lock = NSLock()
    private let listener: Int32
    private let upstreamPort: Int
    private var open: [Int32] = []
    private var refusing = false
    /// The first bytes sent to clients (64 KiB at most), for tests to wait on what a client got.
    private var toClients: [UInt8] = []
    /// The port clients connect to.
    let port: Int

    init(to upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw ProxyError()
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// Cuts every open connection; with `refusingNew`, new ones are closed at once until
    /// ``resume()``, as while the network is down.
    func cut(refusingNew: Bool = false) {
        lock.lock()
        defer { lock.unlock() }
        refusing = refusingNew
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        open = []
    }

    /// Lets connections through again.
    func resume() {
        lock.lock()
        defer { lock.unlock() }
        refusing = false
    }

    /// Stops listening and cuts every connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            lock.lock()
            let refused = refusing
            lock.unlock()
            guard !refused, let upstream = connectUpstream() else {
                close(client)
                continue
            }
            lock.lock()
            open += [client, upstream]
            lock.unlock()
            let ended = Countdown(2) { [self] in
                // Forgotten before closing, so a cut never shuts a reused descriptor.
                lock.lock()
                open.removeAll { $0 == client || $0 == upstream }
                close(client)
                close(upstream)
                lock.unlock()
            }
            Thread.detachNewThread { Self.pump(from: client, to: upstream, then: ended) }
            Thread.detachNewThread {
                Self.pump(from: upstream, to: client, then: ended) { [self] bytes in
                    lock.lock()
                    if toClients.count < 64 * 1024 { toClients += bytes.prefix(64 * 1024 - toClients.count) }
                    lock.unlock()
                }
            }
        }
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: upstreamPort)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Copies bytes one way until either side ends, then ends both directions.
    /// Whether the bytes written to clients so far hold `text` (in the first 64 KiB).
    func hasSentToClients(_ text: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: toClients, as: UTF8.self).contains(text)
    }

    private static func pump(
        from source: Int32, to destination: Int32, then ended: Countdown,
        forwarded: (ArraySlice<UInt8>) -> Void = { _ in }
    ) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        copying: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes {
                    write(destination, $0.baseAddress! + sent, count - sent)
                }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { break copying }
                sent += written
            }
            forwarded(buffer[..<count])
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        ended.done()
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

struct ProxyError: Error {}

/// Runs `action` once `count` parties have called ``done()``.
private final class Countdown: @unchecked Sendable {
    // @unchecked Sendable: `remaining` is only touched with `lock` held.
    private let lock = NSLock()
    private var remaining: Int
    private let action: () -> Void

    init(_ count: Int, action: @escaping () -> Void) {
        remaining = count
        self.action = action
    }

    func done() {
        lock.lock()
        remaining -= 1
        let last = remaining == 0
        lock.unlock()
        if last { action() }
    }
}
