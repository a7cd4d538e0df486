import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// E-mail verification and change through the SDK, against a real server mailing a real local
/// SMTP server (aiosmtpd).
@Suite struct EmailAddressClientTests {
    /// The code of the `count`th mail (no link base is set: the mail holds the token alone).
    static func code(_ smtp: FakeSMTP, count: Int, to recipient: String) async throws -> String {
        guard await eventually({ smtp.messages.count >= count }) else {
            throw TestClientError(description: "expected \(count) messages, got \(smtp.messages.count)")
        }
        let text = try #require(
            smtp.messages.last { $0["rcpt_tos"] as? [String] == [recipient] }?["text"] as? String)
        return try #require(
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
                $0.count == 43
            })
    }

    @Test func verifyThenChangeTheAddress() async throws {
        let smtp = try await FakeSMTP.start()
        let server = try await makeMailServer(smtp)
        let client = try makeClient(port: server.port)
        await #expect(throws: RoostError.self) {
            try await client.register(userName: "ana", password: "correct horse", email: "ana@example.com")
        }
        do {
            try await client.login(userName: "ana", password: "correct horse")
            Issue.record("an unverified login succeeded")
        } catch let error as RoostError {
            #expect(error.code == .emailNotVerified)
            #expect(error.status == 403)
        }
        // Logged out, a resend by address answers the same for any address.
        try await client.requestEmailVerification(email: "nobody@example.com")
        try await client.requestEmailVerification(email: "ana@example.com")
        let token = try await Self.code(smtp, count: 2, to: "ana@example.com")
        try await client.confirmEmailVerification(token: token)
        let user = try await client.login(userName: "ana", password: "correct horse")
        #expect(user.emailVerified == true)

        try await client.changeEmail(to: "ana@new.example", password: "correct horse")
        let change = try await Self.code(smtp, count: 4, to: "ana@new.example")
        #expect(try await client.confirmEmailChange(token: change) == "ana@new.example")
        #expect(try await client.session()?.email == "ana@new.example")
        do {
            try await client.confirmEmailChange(token: change)
            Issue.record("a used token worked")
        } catch let error as RoostError {
            #expect(error.code == .invalidEmailToken)
        }
        await server.stop()
        await smtp.stop()
    }
}
