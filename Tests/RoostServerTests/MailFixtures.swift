import Foundation
import RoostCore
import RoostDrivers
import RoostServer
import RoostTestSupport
import Synchronization

/// A server whose mail goes to a fake SMTP server (nil `smtpURL`: mail not configured), with a
/// manual clock, cheap hashing, and its log lines kept.
struct MailWorld {
    let server: TestServer
    let clock: ManualWallClock
    let logs: LogLines

    static let from = "noreply@roost.test"
    static let resetURL = "https://app.roost.test/reset"

    static func make(
        smtpURL: String?, user: String? = nil, password: String? = nil,
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> MailWorld {
        let clock = ManualWallClock(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let logs = LogLines()
        var settings = SMTPSettings()
        settings.url = smtpURL
        settings.startTLS = "off"
        settings.username = user
        let sender = try StandardDrivers.mailSender(
            for: settings, environment: password.map { ["ROOST_SMTP_PASSWORD": $0] } ?? [:])
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.clock = clock
            configuration.mail.sender = sender
            configuration.mail.from = smtpURL == nil ? nil : Self.from
            configuration.mail.reset.resetURL = Self.resetURL
            configuration.mail.reset.appName = "Birdhouse"
            configuration.mail.dispatch.pollInterval = .milliseconds(50)
            configuration.mail.dispatch.firstRetryDelay = .seconds(10)
            configuration.accessLog = true
            configuration.accessLogSink = { logs.append($0) }
            configuration.logSink = { logs.append($0) }
            configure(&configuration)
        }
        return MailWorld(server: server, clock: clock, logs: logs)
    }

    var client: TestHTTPClient { server.client }
    var dispatcher: MailDispatcher? { server.application.mailDispatcher }

    /// Registers `name` with `email`.
    func user(_ name: String, email: String) async throws {
        let registered = try await client.register(name, extra: #","email":"\#(email)""#)
        guard registered.status == 201 else {
            throw TestClientError(description: "register failed: \(registered.text)")
        }
    }

    func requestReset(_ email: String) async throws -> TestResponse {
        try await client.send("POST", "/ff/password/reset", json: #"{"email":"\#(email)"}"#)
    }

    func confirm(_ token: String, _ password: String) async throws -> TestResponse {
        try await client.send(
            "POST", "/ff/password/reset/confirm", json: #"{"token":"\#(token)","password":"\#(password)"}"#)
    }

    /// The token in a reset mail's link.
    static func token(in message: [String: Any]) -> String? {
        guard let text = message["text"] as? String,
            let range = text.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression)
        else { return nil }
        return String(text[range].dropFirst("token=".count))
    }

    /// Waits for the fake to hold `count` messages and returns them.
    static func messages(_ smtp: FakeSMTP, count: Int) async throws -> [[String: Any]] {
        guard await eventually({ smtp.messages.count >= count }) else {
            throw TestClientError(
                description:
                    "expected \(count) messages, got \(smtp.messages.count): \(smtp.fake.errorOutput)")
        }
        return smtp.messages
    }
}

/// Every log line a server wrote, to check what never appears in them.
final class LogLines: Sendable {
    private let lines = Mutex<[UInt8]>([])

    func append(_ bytes: [UInt8]) { lines.withLock { $0 += bytes } }

    var text: String { lines.withLock { String(decoding: $0, as: UTF8.self) } }
}
