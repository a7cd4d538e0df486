import Foundation
import RoostCore
import RoostServer
import RoostTestSupport

/// Verification and change on a ``MailWorld``.
extension MailWorld {
    static let verifyURL = "https://app.roost.test/verify"
    static let changeURL = "https://app.roost.test/change-email"

    /// A world whose verification mode is `mode`, with both link bases set.
    static func make(
        smtpURL: String?, verification mode: EmailVerificationMode,
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> MailWorld {
        try await make(smtpURL: smtpURL) { configuration in
            configuration.mail.email.verification = mode
            configuration.mail.email.verificationURL = Self.verifyURL
            configuration.mail.email.changeURL = Self.changeURL
            configure(&configuration)
        }
    }

    func requestVerification(_ email: String) async throws -> TestResponse {
        try await client.send("POST", "/ff/email/verify/request", json: #"{"email":"\#(email)"}"#)
    }

    func confirmVerification(_ token: String) async throws -> TestResponse {
        try await client.send("POST", "/ff/email/verify/confirm", json: #"{"token":"\#(token)"}"#)
    }

    func requestChange(_ session: String, to email: String, password: String = "correct horse") async throws
        -> TestResponse
    {
        try await client.send(
            "POST", "/ff/email/change", json: #"{"newEmail":"\#(email)","password":"\#(password)"}"#,
            headers: [("X-Token", session)])
    }

    func confirmChange(_ token: String) async throws -> TestResponse {
        try await client.send("POST", "/ff/email/change/confirm", json: #"{"token":"\#(token)"}"#)
    }

    /// The user object `/ff/session` gives for a session.
    func sessionUser(_ session: String) async throws -> [String: Any] {
        let answer = try await client.send("GET", "/ff/session", headers: [("X-Token", session)])
        return answer.json["user"] as? [String: Any] ?? [:]
    }

    func loginAnswer(_ identifier: String, password: String = "correct horse") async throws -> TestResponse {
        try await client.send(
            "POST", "/ff/login", json: #"{"userName":"\#(identifier)","password":"\#(password)"}"#)
    }
}
