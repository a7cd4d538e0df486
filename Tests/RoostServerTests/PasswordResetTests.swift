import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Issue 29, items 1 and 2: the mail outbox delivering over SMTP to a real local server
/// (aiosmtpd), and password reset by mail.
@Suite("Password reset by mail")
struct PasswordResetTests {
    static let accepted =
        #"{"accepted":true,"message":"If an account has this address, a mail with a reset link is on its way."}"#
    static let invalidToken = "The reset link is unknown, used or expired; ask for a new one."

    @Test("without an SMTP server the reset answers 503 mail_not_configured")
    func notConfigured() async throws {
        let world = try await MailWorld.make(smtpURL: nil)
        let answer = try await world.requestReset("alice@example.com")
        #expect(answer.status == 503)
        #expect(answer.json["code"] as? String == "mail_not_configured")
        #expect(
            answer.json["message"] as? String
                == "Mail is not configured on this server: start roost serve with --smtp-url and --mail-from."
        )
        let confirm = try await world.confirm("x", "a new long password")
        #expect(confirm.status == 400)
        #expect(confirm.json["code"] as? String == "invalid_reset_token")
        await world.server.stop()
    }

    @Test("the link works once, sets the password, and ends every session")
    func resetWorksOnce() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url)
        try await world.user("alice", email: "alice@example.com")
        let phone = try await world.client.login("alice", device: "phone")
        let laptop = try await world.client.login("alice", device: "laptop")

        let requested = try await world.requestReset("Alice@Example.com")
        #expect(requested.status == 202)
        #expect(requested.text == Self.accepted)
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        #expect(message["rcpt_tos"] as? [String] == ["alice@example.com"])
        #expect(message["mail_from"] as? String == MailWorld.from)
        #expect(message["subject"] as? String == "Reset your Birdhouse password")
        #expect(message["from"] as? String == "Birdhouse <noreply@roost.test>")
        let token = try #require(MailWorld.token(in: message))
        #expect(token.count == 43)
        #expect((message["text"] as? String)?.contains(MailWorld.resetURL + "?token=" + token) == true)
        #expect((message["text"] as? String)?.contains("30 minutes") == true)
        #expect(
            (message["html"] as? String)?.contains(#"href="\#(MailWorld.resetURL)?token=\#(token)""#) == true)

        // The password policy is registration's; a refused password leaves the token alive.
        let weak = try await world.confirm(token, "password")
        #expect(weak.status == 400)
        #expect(weak.json["code"] as? String == "weak_password")
        let done = try await world.confirm(token, "a brand new passphrase")
        #expect(done.status == 200)
        #expect(done.text == #"{"reset":true}"#)
        for session in [phone, laptop] {
            let state = try await world.client.send("GET", "/ff/tokens", headers: [("X-Token", session)])
            #expect(state.status == 401)
            #expect(state.json["code"] as? String == "invalid_token")
        }
        let old = try await world.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#)
        #expect(old.status == 401)
        #expect(old.json["code"] as? String == "invalid_credentials")
        _ = try await world.client.login("alice", password: "a brand new passphrase")

        let again = try await world.confirm(token, "yet another passphrase")
        #expect(again.status == 400)
        #expect(again.json["code"] as? String == "invalid_reset_token")
        #expect(again.json["message"] as? String == Self.invalidToken)
        // No token in any log line: not the reset token, not in the access log's paths.
        #expect(!world.logs.text.contains(token))
        await world.server.stop()
        await smtp.stop()
    }

    @Test("the link expires after 30 minutes (a manual clock, no sleeping)")
    func expires() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url)
        try await world.user("bob", email: "bob@example.com")
        #expect(try await world.requestReset("bob@example.com").status == 202)
        let mail = try #require(try await MailWorld.messages(smtp, count: 1).first)
        let token = try #require(MailWorld.token(in: mail))
        world.clock.advance(seconds: 30 * 60)
        let late = try await world.confirm(token, "a brand new passphrase")
        #expect(late.status == 400)
        #expect(late.json["code"] as? String == "invalid_reset_token")
        #expect(late.json["message"] as? String == Self.invalidToken)
        // The password is as it was.
        _ = try await world.client.login("bob")
        await world.server.stop()
        await smtp.stop()
    }

    @Test("an unknown address gets the same answer and no mail; a second link dies with the first's use")
    func noEnumeration() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url)
        try await world.user("carol", email: "carol@example.com")
        let unknown = try await world.requestReset("nobody@example.com")
        #expect(unknown.status == 202)
        #expect(unknown.text == Self.accepted)
        #expect(
            unknown.headers.map(\.name).sorted()
                == (try await world.requestReset("carol@example.com")).headers.map(\.name).sorted())
        #expect(try await world.requestReset("carol@example.com").text == Self.accepted)
        let messages = try await MailWorld.messages(smtp, count: 2)
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0["rcpt_tos"] as? [String] == ["carol@example.com"] })
        let first = try #require(MailWorld.token(in: messages[0]))
        let second = try #require(MailWorld.token(in: messages[1]))
        #expect(first != second)
        #expect(try await world.confirm(second, "a brand new passphrase").status == 200)
        #expect(
            try await world.confirm(first, "another new passphrase").json["code"] as? String
                == "invalid_reset_token")
        await world.server.stop()
        await smtp.stop()
    }

    @Test("bad bodies: each with its status and code")
    func limits() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url)
        let cases: [(String, String, Int, String)] = [
            ("/ff/password/reset", "{}", 400, "missing_field"),
            ("/ff/password/reset", #"{"email":7}"#, 400, "invalid_field"),
            ("/ff/password/reset", #"{"email":"not-an-address"}"#, 400, "invalid_field"),
            ("/ff/password/reset", #"{"email":"a@b.com\r\nBcc: x@y.com"}"#, 400, "invalid_field"),
            (
                "/ff/password/reset", #"{"email":"\#(String(repeating: "a", count: 250))@b.com"}"#, 400,
                "invalid_field"
            ),
            ("/ff/password/reset/confirm", #"{"password":"a brand new passphrase"}"#, 400, "missing_field"),
            ("/ff/password/reset/confirm", #"{"token":"abc"}"#, 400, "missing_field"),
            (
                "/ff/password/reset/confirm",
                #"{"token":"\#(String(repeating: "a", count: 129))","password":"a brand new passphrase"}"#,
                400, "invalid_reset_token"
            ),
        ]
        for (path, body, status, code) in cases {
            let answer = try await world.client.send("POST", path, json: body)
            #expect(answer.status == status, "\(body)")
            #expect(answer.json["code"] as? String == code, "\(body): \(answer.text)")
        }
        let large = try await world.client.send(
            "POST", "/ff/password/reset", body: Array(repeating: UInt8(ascii: " "), count: 70 * 1024))
        #expect(large.status == 413)
        #expect(smtp.messages.isEmpty)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("throttled: per address the answer stays the same and no more mail goes; per client 429")
    func throttled() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url) { $0.mail.reset.perClient = 5 }
        try await world.user("dora", email: "dora@example.com")
        try await world.user("erin", email: "erin@example.com")
        for _ in 0..<4 {
            let answer = try await world.requestReset("dora@example.com")
            #expect(answer.status == 202)
            #expect(answer.text == Self.accepted)
        }
        #expect(try await world.requestReset("erin@example.com").status == 202)
        let messages = try await MailWorld.messages(smtp, count: 4)
        #expect(messages.filter { $0["rcpt_tos"] as? [String] == ["dora@example.com"] }.count == 3)
        #expect(messages.filter { $0["rcpt_tos"] as? [String] == ["erin@example.com"] }.count == 1)
        let limited = try await world.requestReset("erin@example.com")
        #expect(limited.status == 429)
        #expect(limited.json["code"] as? String == "too_many_reset_requests")
        #expect(limited.header("Retry-After") == "3600")
        // The window passes.
        world.clock.advance(seconds: 3600)
        #expect(try await world.requestReset("erin@example.com").status == 202)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("an SMTP outage: the mail waits in the outbox and arrives once the server is back, once")
    func survivesOutage() async throws {
        // A port that was just free: the server is down when the mail is queued.
        let first = try await FakeSMTP.start()
        let port = first.port
        await first.stop()
        let world = try await MailWorld.make(smtpURL: "smtp://127.0.0.1:\(port)")
        try await world.user("fay", email: "fay@example.com")
        #expect(try await world.requestReset("fay@example.com").status == 202)
        let dispatcher = try #require(world.dispatcher)
        #expect(try await eventually { dispatcher.metrics.retriedCount == 1 })
        let smtp = try await FakeSMTP.start(port: port)
        // Before its retry is due nothing is sent, however many rounds pass.
        let rounds = dispatcher.completedRounds
        #expect(try await eventually { dispatcher.completedRounds >= rounds + 3 })
        #expect(smtp.messages.isEmpty)
        world.clock.advance(seconds: 10)
        let messages = try await MailWorld.messages(smtp, count: 1)
        #expect(messages.first?["rcpt_tos"] as? [String] == ["fay@example.com"])
        // Delivered, not again: more rounds and time change nothing.
        world.clock.advance(seconds: 3600)
        let later = dispatcher.completedRounds
        #expect(try await eventually { dispatcher.completedRounds >= later + 3 })
        #expect(smtp.messages.count == 1)
        #expect(dispatcher.metrics.sentCount == 1)
        let delivered = try #require(messages.first)
        let token = try #require(MailWorld.token(in: delivered))
        world.clock.advance(seconds: -3600)
        #expect(try await world.confirm(token, "a brand new passphrase").status == 200)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("AUTH with the password from the environment; a refused recipient is not retried")
    func authenticatesAndRecordsRefusals() async throws {
        let smtp = try await FakeSMTP.start(
            user: "roost", password: "s3cret-pass", rejecting: ["gone@example.com"])
        let world = try await MailWorld.make(smtpURL: smtp.url, user: "roost", password: "s3cret-pass")
        try await world.user("gail", email: "gone@example.com")
        try await world.user("hana", email: "hana@example.com")
        #expect(try await world.requestReset("gone@example.com").status == 202)
        let dispatcher = try #require(world.dispatcher)
        #expect(try await eventually { dispatcher.metrics.failedCount == 1 })
        #expect(try await world.requestReset("hana@example.com").status == 202)
        let messages = try await MailWorld.messages(smtp, count: 1)
        #expect(messages.first?["authenticated"] as? Bool == true)
        #expect(messages.first?["rcpt_tos"] as? [String] == ["hana@example.com"])
        #expect(dispatcher.metrics.retriedCount == 0)
        #expect(!world.logs.text.contains("s3cret-pass"))
        #expect(world.logs.text.contains("SMTP 550"))
        await world.server.stop()
        await smtp.stop()
    }
}
