import Foundation

/// A fake SMTP server (Tests/fakes/fake_smtp.py, on PyPI's aiosmtpd) recording every message it
/// accepts, parsed, as a JSON line.
public struct FakeSMTP: Sendable {
    public let fake: FakePushProvider

    public var port: Int { fake.port }
    public var url: String { "smtp://127.0.0.1:\(fake.port)" }
    /// `roost serve` flags that send its mail here, in the clear, from noreply@roost.test.
    public var serveArguments: [String] {
        ["--smtp-url", url, "--smtp-starttls", "off", "--mail-from", "noreply@roost.test"]
    }
    /// The accepted messages, oldest first: `rcpt_tos`, `mail_from`, `subject`, `text`, `html`…
    public var messages: [[String: Any]] { fake.events("message") }

    /// Starts one in a folder of its own; `port` 0 lets it choose. With `user`, AUTH is required.
    public static func start(
        port: Int = 0, user: String? = nil, password: String? = nil, rejecting: [String] = []
    ) async throws -> FakeSMTP {
        let folder = TestServer.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var arguments = ["--port", String(port)]
        if let user, let password { arguments += ["--user", user, "--password", password] }
        for address in rejecting { arguments += ["--reject", address] }
        return FakeSMTP(fake: try await FakePushProvider.start("fake_smtp.py", arguments, folder: folder))
    }

    public func stop() async { await fake.stop() }
}
