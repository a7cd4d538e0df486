import Foundation
import Glibc
import RoostCore
import RoostHTTP
import RoostTestSupport
import Testing

/// The docs' nginx and Caddy blocks, taken from docs/running.md itself and run in front of a Roost
/// with `--trusted-proxies 127.0.0.1`: a client's own forwarding headers never choose its address.
/// Both proxies pass a client's `Forwarded` through untouched; nginx appends the peer to
/// `X-Forwarded-For`, Caddy replaces it.
@Suite("Behind the docs' proxies")
struct RealProxyTests {
    enum Proxy: String, CaseIterable, CustomStringConvertible {
        case nginx, caddy
        var description: String { rawValue }
    }

    @Test(arguments: Proxy.allCases)
    func aClientsOwnForwardingHeadersNeverChooseItsAddress(proxy: Proxy) async throws {
        guard let binary = Self.binary(proxy) else {
            Issue.record("\(proxy) is not installed; scripts/test.sh installs it")
            return
        }
        let log = LogCapture()
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.loginLimits = LoginThrottle.Limits(
                perAccount: 100, perAddress: 3, window: 3_600_000)
            configuration.trustedProxies = try! TrustedProxies("127.0.0.1")
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
        }
        defer { Task { await server.stop() } }
        let running = try await RunningProxy(proxy, binary: binary, upstream: server.port)
        defer { running.stop() }

        // The attacker is 127.0.0.2 (only 127.0.0.1, the proxy, is trusted). Each failure claims
        // another address in both headers; every one is counted against 127.0.0.2.
        var statuses: [Int] = []
        for index in 0..<4 {
            let status = try await Self.failedLogin(
                port: running.port, from: "127.0.0.2",
                headers: [
                    ("Forwarded", "for=198.51.100.\(index);proto=https"),
                    ("X-Forwarded-For", "203.0.113.\(index)"),
                ])
            statuses.append(status)
        }
        #expect(statuses == [401, 401, 401, 429])
        // Naming a victim in the headers does not lock the victim out: 127.0.0.3 still gets in.
        #expect(try await Self.failedLogin(port: running.port, from: "127.0.0.3", headers: []) == 401)
        #expect(
            await eventually {
                log.text.split(separator: "\n").filter {
                    $0.contains(" 127.0.0.2 ") && $0.contains("/ff/login")
                }
                .count == 4
            })
        // The forged addresses were never believed, so nobody else was locked out or logged.
        #expect(!log.text.contains("198.51.100."))
        #expect(!log.text.contains("203.0.113."))
    }

    /// A failed login sent from `source` (a loopback address the socket binds), through the proxy.
    static func failedLogin(port: Int, from source: String, headers: [(String, String)]) async throws -> Int {
        let body = #"{"userName":"mallory","password":"wrong guess"}"#
        var head = "POST /ff/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let connection = try RawConnection(port: port, timeout: 30, from: source)
        connection.send(head + "\r\n" + body)
        return try await connection.response().status
    }

    static func binary(_ proxy: Proxy) -> String? {
        let candidates = proxy == .nginx ? ["/usr/sbin/nginx"] : ["/usr/bin/caddy"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The first fenced block of `language` in the docs' "Behind a reverse proxy" section.
    static func readmeBlock(_ language: String) throws -> String {
        try DocumentationBlocks.first(language, after: "Behind a reverse proxy", in: "docs/running.md")
    }
}

/// nginx or Caddy in the foreground, configured from the docs' block, on a port of its own.
final class RunningProxy: Sendable {
    let port: Int
    private let process: ChildProcess
    private let directory: String

    init(_ proxy: RealProxyTests.Proxy, binary: String, upstream: Int) async throws {
        directory = TestServer.makeTemporaryDirectory()
        port = try freeLoopbackPort()
        let block = try RealProxyTests.readmeBlock(proxy == .nginx ? "nginx" : "caddy")
            .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(upstream)")
        let path: String
        let arguments: [String]
        switch proxy {
        case .nginx:
            path = directory + "/nginx.conf"
            let config = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log;
                events { worker_connections 64; }
                http {
                    access_log off;
                    client_body_temp_path \(directory)/body;
                    proxy_temp_path \(directory)/proxy;
                    fastcgi_temp_path \(directory)/fastcgi;
                    uwsgi_temp_path \(directory)/uwsgi;
                    scgi_temp_path \(directory)/scgi;
                    server {
                        listen 127.0.0.1:\(port);
                \(block)
                    }
                }
                """
            try config.write(toFile: path, atomically: true, encoding: .utf8)
            arguments = ["-p", directory, "-c", path]
        case .caddy:
            path = directory + "/Caddyfile"
            // The docs' site address is a public name; here a plain-HTTP one on the test's port.
            let site = try #require(block.split(separator: "\n").first)
            let config =
                "{\n    admin off\n    auto_https off\n    storage file_system \(directory)/data\n}\n"
                + block.replacingOccurrences(of: String(site), with: "http://127.0.0.1:\(port) {")
            try config.write(toFile: path, atomically: true, encoding: .utf8)
            arguments = ["run", "--adapter", "caddyfile", "--config", path]
        }
        let log = open(directory + "/proxy.log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(log) }
        process = try ChildProcess(binary, arguments, output: log, error: log)
        let port = self.port
        let ready = await eventually(within: 30) { (try? RawConnection(port: port)) != nil }
        if !ready {
            let output = (try? String(contentsOfFile: directory + "/proxy.log", encoding: .utf8)) ?? ""
            throw TestClientError(description: "\(proxy) did not start: \(output)")
        }
    }

    func stop() {
        process.signal(SIGTERM)
        process.waitForExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
