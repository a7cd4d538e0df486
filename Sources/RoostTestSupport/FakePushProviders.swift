import Foundation

/// A fake push provider (Tests/fakes/fake_apns.py or fake_fcm.py) running as a child process on a
/// port of its own choosing, recording what arrived as JSON lines. Stopped by ``stop()``, or
/// killed when it is released (a failed test never leaves one running).
public final class FakePushProvider: Sendable {
    public let port: Int
    /// A second port the fake printed (fake_oidc.py's plain-HTTP control listener).
    public let secondPort: Int?
    /// Where the fake writes one JSON object a line: connections, requests, token exchanges.
    public let logPath: String
    private let errorPath: String
    private let child: ChildProcess

    /// The Python with PyPI's `h2` (the tests' venv first), or nil when there is none.
    public static let python: String? = {
        let candidates = [sourceRoot + "/.build/browser-venv/bin/python3", "/usr/bin/python3"]
        return candidates.first { path in
            guard FileManager.default.isExecutableFile(atPath: path) else { return false }
            let child = try? ChildProcess(path, ["-c", "import h2"])
            return child?.waitForExit() == 0
        }
    }()

    /// Starts `Tests/fakes/<script>` with `arguments` plus `--log`; returns once it has printed
    /// the port it listens on.
    public static func start(
        _ script: String, _ arguments: [String], folder: String, python: String? = FakePushProvider.python
    ) async throws -> FakePushProvider {
        guard let python else {
            throw TestClientError(
                description: "no Python with h2: run scripts/install-deps.sh --browser-tests")
        }
        let logPath = folder + "/\(script).jsonl"
        let errorPath = folder + "/\(script).stderr"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let output = try ChildProcess.makePipe()
        let errorFile = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(errorFile) }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                python, ["-u", sourceRoot + "/Tests/fakes/" + script] + arguments + ["--log", logPath],
                output: output.write, error: errorFile)
        } catch {
            close(output.read)
            close(output.write)
            throw error
        }
        close(output.write)
        // The fake's first line is "PORT <n>"; end of file instead means it failed to start.
        let line = try await offCooperativePool { () -> String in
            let handle = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
            var bytes: [UInt8] = []
            while let byte = try handle.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let ports = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard line.hasPrefix("PORT "), let port = ports.first else {
            _ = try? await child.exit()
            let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw TestClientError(description: "\(script) did not start: \(line) \(errors)")
        }
        return FakePushProvider(
            port: port, secondPort: ports.dropFirst().first, logPath: logPath, errorPath: errorPath,
            child: child)
    }

    private init(port: Int, secondPort: Int?, logPath: String, errorPath: String, child: ChildProcess) {
        self.port = port
        self.secondPort = secondPort
        self.logPath = logPath
        self.errorPath = errorPath
        self.child = child
    }

    /// Everything recorded so far, in order.
    public func events() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The recorded events whose `event` is `kind` ("request", "connection", "send", "token").
    public func events(_ kind: String) -> [[String: Any]] {
        events().filter { $0["event"] as? String == kind }
    }

    /// What the fake wrote on standard error (a traceback when it broke).
    public var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    public func stop() async {
        guard child.isRunning else { return }
        child.signal(SIGTERM)
        _ = try? await child.exit()
    }

    /// Runs `body`, then stops the fake whether `body` threw or not.
    public func whileRunning<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// A throwaway signing key made with `openssl`: `NAME.pem` (PKCS#8, as a `.p8` or a service
    /// account's private_key) and `NAME.pub` (its public half, for the fakes).
    public static func makeKey(_ name: String, rsa: Bool, folder: String) async throws -> (
        privateKey: String, publicKey: String
    ) {
        let base = folder + "/" + name
        let options = rsa ? ["-pkeyopt", "rsa_keygen_bits:2048"] : ["-pkeyopt", "ec_paramgen_curve:P-256"]
        for arguments in [
            ["genpkey", "-algorithm", rsa ? "RSA" : "EC"] + options + ["-out", base + ".pem"],
            ["pkey", "-in", base + ".pem", "-pubout", "-out", base + ".pub"],
        ] {
            let result = try await runProgram("/usr/bin/openssl", arguments)
            guard result.status == 0 else {
                throw TestClientError(description: "openssl \(arguments[0]) failed: \(result.errorOutput)")
            }
        }
        return (base + ".pem", base + ".pub")
    }
}

/// The checkout this file is in (the fakes live under Tests/fakes, the tools the tests install
/// under .build).
public let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// A fake APNs gateway (Tests/fakes/fake_apns.py) with a throwaway CA and provider key: what a
/// sender needs to reach it (`keyFile`, `certificateAuthority`, `url`) and the fake itself.
public struct FakeAPNs: Sendable {
    public let fake: FakePushProvider
    public let keyFile: String
    public let certificateAuthority: String
    public let keyID: String
    public let teamID: String
    public let topic: String

    public var url: String { "https://127.0.0.1:\(fake.port)" }
    /// What the fake was sent, oldest first.
    public var requests: [[String: Any]] { fake.events("request") }

    /// Starts a fake answering as `script` (fake_apns.py's JSON: per-token answers, hangs, GOAWAY).
    public static func start(
        authority: TestCertificateAuthority, script: String = "{}", keyID: String = "KEY1234567",
        teamID: String = "TEAM123456", topic: String = "org.roost.Tests"
    ) async throws -> FakeAPNs {
        let folder = authority.folder
        let server = try await authority.issue("apns")
        let key = try await FakePushProvider.makeKey("AuthKey_\(keyID)", rsa: false, folder: folder)
        let scriptPath = folder + "/apns-script-\(UUID().uuidString).json"
        try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
        let fake = try await FakePushProvider.start(
            "fake_apns.py",
            [
                "--cert", server.certificate, "--key", server.key, "--public-key", key.publicKey,
                "--key-id", keyID, "--team-id", teamID, "--topic", topic, "--script", scriptPath,
            ], folder: folder)
        return FakeAPNs(
            fake: fake, keyFile: key.privateKey, certificateAuthority: authority.certificate, keyID: keyID,
            teamID: teamID, topic: topic)
    }

    /// `roost serve`'s options sending APNs (both gateways) to this fake.
    public var serveArguments: [String] {
        [
            "--apns-key-file", keyFile, "--apns-key-id", keyID, "--apns-team-id", teamID, "--apns-url", url,
            "--apns-sandbox-url", url, "--push-ca-file", certificateAuthority,
        ]
    }
}
