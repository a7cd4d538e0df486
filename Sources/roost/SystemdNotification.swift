import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's readiness protocol (`Type=notify`): one datagram such as `READY=1` to the unix socket
/// named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without the variable,
/// as when not run by systemd, nothing is sent. Failures are ignored: a supervisor that cannot be
/// told must not stop the server.
enum SystemdNotification {
    /// The server listens and answers requests.
    static func ready(status: String) { send("READY=1\nSTATUS=\(status)\nMAINPID=\(getpid())") }
    /// The server began its graceful stop.
    static func stopping() { send("STOPPING=1") }
    /// The server re-reads its configuration (SIGHUP); `reloaded()` follows.
    static func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
    }
    static func reloaded() { send("READY=1") }

    static func send(_ message: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity, abstract || path.first == UInt8(ascii: "/") else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // An abstract name's length is exact (no terminating NUL); a path's includes its NUL.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
    }
}
