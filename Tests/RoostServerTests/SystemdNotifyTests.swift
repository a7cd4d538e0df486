import Foundation
import RoostTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `Type=notify`: the binary tells systemd through `NOTIFY_SOCKET` when it is ready, reloading
/// and stopping. The socket here is the test's own, as systemd's would be.
@Suite("systemd readiness")
struct SystemdNotifyTests {
    /// A bound unix datagram socket that reads what the server sends.
    final class NotifySocket: Sendable {
        let descriptor: Int32
        let name: String

        init(abstract: Bool) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path =
                abstract
                ? "roost-notify-\(UUID().uuidString)" : TestServer.makeTemporaryDirectory() + ".notify"
            name = abstract ? "@" + path : path
            let bytes = (abstract ? [0] : []) + Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) {
                for (index, byte) in bytes.enumerated() { $0[index] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            guard descriptor >= 0, bound == 0 else {
                throw TestClientError(description: "bind: errno \(errno)")
            }
        }

        deinit { close(descriptor) }

        /// The next datagram, or nil when none comes within 30 s (a bound, not a pace).
        func next() async throws -> String? {
            let descriptor = self.descriptor
            return try await offCooperativePool {
                var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&waiting, 1, 30_000) == 1 else { return nil }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(descriptor, &buffer, buffer.count, 0)
                return count < 0 ? nil : String(decoding: buffer[..<count], as: UTF8.self)
            }
        }
    }

    @Test(
        "READY=1 once listening, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM",
        arguments: [false, true])
    func notifications(abstract: Bool) async throws {
        let listener = try NotifySocket(abstract: abstract)
        let directory = TestServer.makeTemporaryDirectory()
        if TestBackend.current == .postgres { _ = try await TestBackend.databaseURL(for: directory) }
        let server = try RoostProcess(
            dataDirectory: directory, launcher: ["/usr/bin/env", "NOTIFY_SOCKET=\(listener.name)"])
        // env execs the binary, so its pid is the server's.
        #expect(
            try await listener.next()
                == "READY=1\nSTATUS=listening on http://127.0.0.1:\(server.port)\nMAINPID=\(server.process.pid)"
        )
        server.process.signal(SIGHUP)
        let reloading = try #require(try await listener.next())
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), "\(reloading)")
        #expect(UInt64(reloading.split(separator: "=").last ?? "") != nil, "\(reloading)")
        #expect(try await listener.next() == "READY=1")
        #expect(try await server.stop(signal: SIGTERM) == 0)
        #expect(try await listener.next() == "STOPPING=1")
    }

    @Test("the unit waits for readiness: Type=notify, notifications from the main process only")
    func unitIsNotify() throws {
        let unit = try DeployTests.text("deploy/roost.service").split(separator: "\n")
        #expect(unit.contains("Type=notify"))
        #expect(unit.contains("NotifyAccess=main"))
    }
}
