import Foundation
import RoostServer
import RoostTestSupport
import Testing

/// Issue 14, item 1: TLS built in. Clients that verify the server against a CA made for the test
/// (Python's `ssl`, curl, the SDK), the protocol floor, certificate reload without dropping
/// connections, the redirect listener, HSTS, start failures, and handshakes that never finish.
@Suite("TLS built in", .serialized)
struct TLSTests {
    /// `roost serve` (the real binary) over TLS with this certificate and key.
    func serveTLS(
        _ pair: (certificate: String, key: String),
        dataDirectory: String = TestServer.makeTemporaryDirectory(),
        _ extra: [String] = []
    ) throws -> RoostProcess {
        try RoostProcess(
            dataDirectory: dataDirectory,
            arguments: ["--tls-cert", pair.certificate, "--tls-key", pair.key] + extra)
    }

    /// An in-process server over TLS.
    func tlsServer(
        _ pair: (certificate: String, key: String), configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.tlsCertificatePath = pair.certificate
            configuration.tlsKeyPath = pair.key
            configure(&configuration)
        }
    }

    @Test("Python's ssl and curl --cacert verify the certificate; TLS 1.3 and 1.2, ALPN http/1.1, HSTS")
    func verifyingClients() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try serveTLS(try await authority.issue("server"))
        let port = String(server.port)

        let health = try await pythonTLS("get", port, authority.certificate, "localhost", "/health")
        #expect(health["status"] as? Int == 200)
        #expect(health["body"] as? String == #"{"status":"ok"}"#)
        #expect(health["version"] as? String == "TLSv1.3")
        #expect(health["alpn"] as? String == "http/1.1")
        #expect((health["headers"] as? [String: String])?["Strict-Transport-Security"] == "max-age=31536000")
        // Answers the server makes itself carry it too; the certificate names 127.0.0.1 as well.
        let missing = try await pythonTLS("get", port, authority.certificate, "127.0.0.1", "/nowhere")
        #expect(missing["status"] as? Int == 404)
        #expect((missing["headers"] as? [String: String])?["Strict-Transport-Security"] == "max-age=31536000")
        // TLS 1.2 negotiates an ECDHE suite of Mozilla's intermediate list.
        let older = try await pythonTLS("get", port, authority.certificate, "localhost", "/health", "TLSv1_2")
        #expect(older["version"] as? String == "TLSv1.2")
        #expect(older["cipher"] as? String == "ECDHE-ECDSA-AES256-GCM-SHA384")
        // Without the test CA the same client refuses the server: it really verifies.
        let untrusted = try await pythonTLS(
            "get", port, "/etc/ssl/certs/ca-certificates.crt", "localhost", "/health")
        #expect((untrusted["error"] as? String)?.contains("CERTIFICATE_VERIFY_FAILED") == true)

        let curl = try await runProgram(
            "/usr/bin/curl",
            ["-sS", "-i", "--cacert", authority.certificate, "https://localhost:\(port)/health"])
        #expect(curl.status == 0, "\(curl.errorOutput)")
        #expect(curl.output.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(curl.output.contains("Strict-Transport-Security: max-age=31536000\r\n"))
        #expect(curl.output.hasSuffix("\r\n\r\n{\"status\":\"ok\"}"))
        let curlUntrusted = try await runProgram(
            "/usr/bin/curl", ["-sS", "https://localhost:\(port)/health"])
        #expect(curlUntrusted.status == 60)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    /// FoundationNetworking's URLSession (libcurl) trusts only the system's CA bundle, whatever
    /// SSL_CERT_FILE or CURL_CA_BUNDLE say; the example runs in a private mount namespace where
    /// that bundle also holds the test CA, so the machine's own trust is never touched.
    @Test(
        "the SDK over https:// with the test CA in the process's trust store",
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func sdkOverHTTPS() async throws {
        let authority = try await TestCertificateAuthority()
        let dataDirectory = TestServer.makeTemporaryDirectory()
        let server = try serveTLS(try await authority.issue("server"), dataDirectory: dataDirectory)
        let created = try await runRoost(
            ["users", "create", "ops", "--password-stdin", "--data-dir", dataDirectory],
            input: "correct horse\n")
        #expect(created.status == 0, "\(created.errorOutput)")
        let bundle = authority.folder + "/bundle.pem"
        let system = try Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"))
        try (Data(contentsOf: URL(fileURLWithPath: authority.certificate)) + system)
            .write(to: URL(fileURLWithPath: bundle))
        let state = TestServer.makeTemporaryDirectory()
        let example = [
            try RoostProcess.productPath("SessionCheck"), "--server", "https://localhost:\(server.port)",
            "--state",
            state,
        ]
        func trusting(_ arguments: String..., input: String = "") async throws -> CommandResult {
            try await runProgram(
                "/usr/bin/unshare",
                [
                    "--mount", "/bin/sh", "-c",
                    #"mount --bind "$0" /etc/ssl/certs/ca-certificates.crt && exec "$@""#, bundle,
                ] + example + arguments, input: input)
        }

        let refused = try await runProgram(
            example[0], Array(example.dropFirst()) + ["login", "ops"], input: "x\n")
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("(network_unreachable)"))
        let login = try await trusting("login", "ops", input: "correct horse\n")
        #expect(login.status == 0, "\(login.errorOutput)")
        #expect(login.output == "welcome, ops\n")
        #expect(try await trusting("status").output == "logged_in: 1 (ops)\n")
        #expect(try await trusting("logout").output == "logged_out: 1\n")
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    @Test("TLS 1.1 is refused with protocol_version; ALPN picks http/1.1 or refuses; TLS 1.2 sessions resume")
    func protocolFloorAndResumption() async throws {
        let authority = try await TestCertificateAuthority()
        let server = try await tlsServer(try await authority.issue("server"))
        let port = String(server.port)
        let old = try await pythonTLS("old-protocol", port, authority.certificate)
        #expect(old["refused"] as? String == "TLSV1_ALERT_PROTOCOL_VERSION")
        // ALPN: http/1.1 is chosen among others; a client that wants only h2 is told no.
        let mixed = try await pythonTLS("alpn", port, authority.certificate, "h2", "http/1.1")
        #expect(mixed["selected"] as? String == "http/1.1")
        let h2 = try await pythonTLS("alpn", port, authority.certificate, "h2")
        #expect((h2["refused"] as? String)?.contains("alert no application protocol") == true)
        let resumed = try await pythonTLS("resume", port, authority.certificate)
        #expect(resumed["reused"] as? Bool == true)
        #expect(
            try await pythonTLS("get", port, authority.certificate, "localhost", "/health")["status"] as? Int
                == 200)
        await server.stop()
    }

    @Test(
        "a key that does not match, a missing file or a file that is no certificate stop the start: exit 78")
    func startFailures() async throws {
        let authority = try await TestCertificateAuthority()
        let first = try await authority.issue("first")
        let second = try await authority.issue("second")
        let notPEM = authority.folder + "/not.pem"
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: notPEM))
        let encrypted = authority.folder + "/encrypted.key"
        let encryption = try await runProgram(
            "/usr/bin/openssl",
            ["pkey", "-in", first.key, "-aes256", "-passout", "pass:secret", "-out", encrypted])
        #expect(encryption.status == 0)
        let directory = TestServer.makeTemporaryDirectory()
        chmod(directory, 0o700)
        func serve(_ certificate: String, _ key: String) async throws -> CommandResult {
            try await runProgram(
                "/usr/bin/timeout",
                [
                    "20", try RoostProcess.binaryPath(), "serve", "--port", "0", "--data-dir", directory,
                    "--tls-cert", certificate, "--tls-key", key,
                ])
        }
        let cases: [(String, String, String)] = [
            (
                first.certificate, second.key,
                "the key in \(second.key) does not match the certificate in \(first.certificate)"
            ),
            (
                authority.folder + "/none.pem", first.key,
                "cannot read the certificate file \(authority.folder)/none.pem: No such file or directory"
            ),
            (
                first.certificate, authority.folder,
                "cannot read the key file \(authority.folder): Is a directory"
            ),
            (
                notPEM, first.key,
                "the certificate file \(notPEM) holds no PEM data; it must start with -----BEGIN CERTIFICATE-----"
            ),
            (
                first.certificate, notPEM,
                "the key file \(notPEM) holds no PEM data; it must start with -----BEGIN PRIVATE KEY----- or similar"
            ),
            (
                first.key, first.key,
                "the certificate file \(first.key) holds no usable certificate chain (no start line)"
            ),
            (
                first.certificate, encrypted,
                "the key file \(encrypted) is encrypted; decrypt it first ('openssl pkey -in KEY -out PLAIN') and keep the plain file readable by roost only"
            ),
        ]
        for (certificate, key, message) in cases {
            let result = try await serve(certificate, key)
            #expect(result.status == 78)
            #expect(result.errorOutput == "roost: cannot start: \(message)\n")
        }
        // Found before the database is opened.
        #expect(!FileManager.default.fileExists(atPath: directory + "/roost.sqlite"))
        let half = try await runRoost(["serve", "--tls-cert", first.certificate])
        #expect(half.status == 64)
        #expect(half.errorOutput.hasPrefix("roost: --tls-cert and --tls-key go together; give both\n"))
        let redirectOnly = try await runRoost(["serve", "--redirect-http", "8081"])
        #expect(redirectOnly.status == 64)
        #expect(redirectOnly.errorOutput.hasPrefix("roost: --redirect-http needs --tls-cert and --tls-key\n"))
    }

}
