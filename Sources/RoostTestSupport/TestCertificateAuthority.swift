import Foundation

/// A throwaway certificate authority made with the `openssl` command for one test, and server
/// certificates it signs for 127.0.0.1 and localhost (subjectAltName), EC P-256 for speed. Used by
/// the TLS tests and the fake push providers.
public struct TestCertificateAuthority: Sendable {
    public let folder: String
    public var certificate: String { folder + "/ca.pem" }

    public init() async throws {
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
    public func issue(_ name: String) async throws -> (certificate: String, key: String) {
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
