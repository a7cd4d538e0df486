import Foundation
import RoostTestSupport
import Testing

/// A throwaway certificate authority made with the `openssl` command for one test, and server
/// certificates it signs for 127.0.0.1 and localhost (subjectAltName), EC P-256 for speed.
struct TestCertificateAuthority {
    let folder: String
    var certificate: String { folder + "/ca.pem" }

    init() async throws {
        folder = TestServer.makeTemporaryDirectory() + "-ca"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder + "/ca.key", "-out", certificate, "-days", "2", "-subj", "/CN=Roost Test CA",
        ])
        try Data(
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: folder + "/server.ext"))
    }

    /// A new key and a certificate for it signed by this authority: `NAME.pem`, `NAME.key`.
    @discardableResult
    func issue(_ name: String) async throws -> (certificate: String, key: String) {
        let base = folder + "/" + name
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            base + ".key", "-out", base + ".csr", "-subj", "/CN=localhost",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", base + ".csr", "-CA", certificate, "-CAkey", folder + "/ca.key",
            "-set_serial", String(Int.random(in: 1...Int(Int32.max))), "-out", base + ".pem", "-days", "2",
            "-extfile", folder + "/server.ext",
        ])
        return (base + ".pem", base + ".key")
    }

    private static func openssl(_ arguments: [String]) async throws {
        let result = try await runProgram("/usr/bin/openssl", arguments)
        guard result.status == 0 else {
            throw TestClientError(description: "openssl \(arguments[0]) failed: \(result.errorOutput)")
        }
    }
}

/// Python's `ssl` module as a client that verifies the server against the test CA: each command
/// prints one JSON object (see the script below).
func pythonTLS(_ arguments: String...) async throws -> [String: Any] {
    let result = try await runProgram("/usr/bin/python3", ["-W", "ignore", pythonTLSClientPath] + arguments)
    let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    return try #require(object as? [String: Any], "python printed \(result.output) \(result.errorOutput)")
}

/// Beside this file; run from the source tree like the rest of the tests.
private let pythonTLSClientPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("tls_client.py").path
