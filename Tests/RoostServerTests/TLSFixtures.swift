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

/// The script, written once per test run.
private let pythonTLSClientPath: String = {
    let path = NSTemporaryDirectory() + "roost-tls-client-\(UUID().uuidString).py"
    try! Data(pythonTLSClient.utf8).write(to: URL(fileURLWithPath: path))
    return path
}()

private let pythonTLSClient = #"""
    """A TLS client for Roost's tests: verifies the server against the test CA, prints JSON."""
    import http.client, json, os, signal, socket, ssl, sys, time

    def context(cafile, minimum=None, maximum=None):
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.set_alpn_protocols(["http/1.1"])
        if minimum: ctx.minimum_version = minimum
        if maximum: ctx.maximum_version = maximum
        return ctx

    def get(connection, path):
        connection.request("GET", path)
        response = connection.getresponse()
        return {"status": response.status, "headers": dict(response.getheaders()),
                "body": response.read().decode()}

    def serial(connection):
        return connection.sock.getpeercert()["serialNumber"]

    def command_get(port, cafile, host, path, maximum=None):
        ctx = context(cafile, maximum=ssl.TLSVersion[maximum] if maximum else None)
        connection = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10)
        result = get(connection, path)
        result.update(version=connection.sock.version(), alpn=connection.sock.selected_alpn_protocol(),
                      cipher=connection.sock.cipher()[0], serial=serial(connection))
        return result

    def command_old_protocol(port, cafile):
        # TLS 1.1 needs security level 0 on the client side of OpenSSL 3.
        ctx = context(cafile, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_1)
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        try:
            with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                    return {"accepted": tls.version()}
        except ssl.SSLError as error:
            return {"refused": error.reason}

    def command_resume(port, cafile):
        ctx = context(cafile, maximum=ssl.TLSVersion.TLSv1_2)
        first = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
        get(first, "/health")
        session = first.sock.session
        first.close()
        with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
                return {"reused": tls.session_reused}

    def command_reload(port, cafile, pid):
        """Keeps one connection open across SIGHUP: it must go on working with the old certificate
        while new connections get the new one."""
        ctx = context(cafile)
        kept = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
        before = get(kept, "/health")["status"]
        old = serial(kept)
        os.kill(int(pid), signal.SIGHUP)
        new = old
        for _ in range(200):
            fresh = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
            get(fresh, "/health")
            new = serial(fresh)
            fresh.close()
            if new != old: break
            time.sleep(0.05)
        after = get(kept, "/health")["status"]
        return {"before": before, "after": after, "kept": serial(kept) == old, "changed": new != old}

    commands = {"get": command_get, "old-protocol": command_old_protocol, "resume": command_resume,
                "reload": command_reload}
    try:
        print(json.dumps(commands[sys.argv[1]](*sys.argv[2:])))
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
    """#
