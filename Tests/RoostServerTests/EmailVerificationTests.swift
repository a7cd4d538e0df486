import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Issue 29, item 2: e-mail verification on registration, against the real server and a real
/// local SMTP server (aiosmtpd).
@Suite("E-mail verification")
struct EmailVerificationTests {
    static let accepted =
        #"{"accepted":true,"message":"If an account has this address and it is not verified yet, a mail with a confirmation link is on its way."}"#
    static let invalidToken = "The confirmation link is unknown, used or expired; ask for a new one."

    @Test("optional: registration mails a link that verifies once; the user object says so")
    func verifiesOnce() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .optional)
        let registered = try await world.client.register("alice", extra: #","email":"Alice@Example.com""#)
        #expect(registered.status == 201)
        let session = try #require(registered.json["token"] as? String)
        #expect((registered.json["user"] as? [String: Any])?["emailVerified"] as? Bool == false)
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        #expect(message["rcpt_tos"] as? [String] == ["alice@example.com"])
        #expect(message["subject"] as? String == "Confirm your Birdhouse e-mail address")
        let token = try #require(MailWorld.token(in: message))
        #expect(token.count == 43)
        #expect((message["text"] as? String)?.contains(MailWorld.verifyURL + "?token=" + token) == true)
        #expect((message["text"] as? String)?.contains("24 hours") == true)
        #expect(
            (message["html"] as? String)?.contains(#"href="\#(MailWorld.verifyURL)?token=\#(token)""#) == true
        )
        // Unverified users log in under `optional`.
        _ = try await world.client.login("alice")

        let done = try await world.confirmVerification(token)
        #expect(done.status == 200)
        #expect(done.text == #"{"verified":true,"email":"alice@example.com"}"#)
        #expect(try await world.sessionUser(session)["emailVerified"] as? Bool == true)
        let again = try await world.confirmVerification(token)
        #expect(again.status == 400)
        #expect(again.json["code"] as? String == "invalid_email_token")
        #expect(again.json["message"] as? String == Self.invalidToken)
        // A verified address gets no more mail, and the same answer.
        #expect(try await world.requestVerification("alice@example.com").text == Self.accepted)
        // The field is the account's: no one sets it through the resource API.
        let guid = (registered.json["user"] as? [String: Any])?["guid"] as? String ?? ""
        let forged = try await world.client.send(
            "PATCH", "/ff/resources/FFUser/\(guid)", json: #"{"emailVerified":false}"#,
            headers: [("X-Token", session)])
        #expect(forged.status == 400)
        #expect(forged.json["code"] as? String == "read_only_field", "\(forged.text)")
        // Like the address, only the user (and administrators) see it.
        let other = try #require(
            try await world.client.register("zed", extra: #","email":"zed@example.com""#).json["token"]
                as? String)
        let seen = try await world.client.send(
            "GET", "/ff/resources/FFUser/\(guid)", headers: [("X-Token", other)])
        #expect(seen.status == 200)
        #expect(seen.text.contains(#""userName":"alice""#))
        #expect(!seen.text.contains("emailVerified") && !seen.text.contains("alice@example.com"))
        #expect(!world.logs.text.contains(token))
        #expect(try await MailWorld.messages(smtp, count: 2).count == 2)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("the link expires after 24 hours (a manual clock); a fresh one works")
    func expires() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .optional)
        try await world.user("bob", email: "bob@example.com")
        let token = try #require(MailWorld.token(in: try await MailWorld.messages(smtp, count: 1)[0]))
        world.clock.advance(seconds: 24 * 3600)
        let late = try await world.confirmVerification(token)
        #expect(late.status == 400)
        #expect(late.json["code"] as? String == "invalid_email_token")
        // Logged in, the user asks again for their own address.
        let session = try await world.client.login("bob")
        let asked = try await world.client.send(
            "POST", "/ff/email/verify/request", json: "{}", headers: [("X-Token", session)])
        #expect(asked.status == 202)
        #expect(asked.text == Self.accepted)
        let fresh = try #require(MailWorld.token(in: try await MailWorld.messages(smtp, count: 2)[1]))
        #expect(try await world.confirmVerification(fresh).status == 200)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("required: no session before verification, refused only after the right password")
    func required() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .required)
        let noEmail = try await world.client.register("nomail")
        #expect(noEmail.status == 400)
        #expect(noEmail.json["code"] as? String == "missing_field")
        let registered = try await world.client.register("carol", extra: #","email":"carol@example.com""#)
        #expect(registered.status == 201)
        #expect(registered.json["token"] == nil)
        #expect(registered.json["emailVerificationRequired"] as? Bool == true)
        #expect((registered.json["user"] as? [String: Any])?["userName"] as? String == "carol")

        let wrong = try await world.loginAnswer("carol", password: "not the password")
        #expect(wrong.status == 401)
        #expect(wrong.json["code"] as? String == "invalid_credentials")
        let unknown = try await world.loginAnswer("nobody", password: "correct horse")
        #expect(unknown.status == 401)
        #expect(unknown.json["code"] as? String == "invalid_credentials")
        for path in ["/ff/login", "/ff/tokens"] {
            let right = try await world.client.send(
                "POST", path, json: #"{"email":"carol@example.com","password":"correct horse"}"#)
            #expect(right.status == 403, "\(path)")
            #expect(right.json["code"] as? String == "email_not_verified")
            #expect(
                right.json["message"] as? String
                    == "Confirm your e-mail address first: open the link mailed to it, or ask for a new one at /ff/email/verify/request."
            )
        }
        let token = try #require(MailWorld.token(in: try await MailWorld.messages(smtp, count: 1)[0]))
        #expect(try await world.confirmVerification(token).status == 200)
        _ = try await world.client.login("carol")
        await world.server.stop()
        await smtp.stop()
    }

    @Test("every address gets the same answer; only an unverified account's gets mail")
    func noEnumeration() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        try await world.user("dora", email: "dora@example.com")
        let unknown = try await world.requestVerification("nobody@example.com")
        let known = try await world.requestVerification("DORA@example.com")
        for answer in [unknown, known] {
            #expect(answer.status == 202)
            #expect(answer.text == Self.accepted)
        }
        #expect(unknown.headers.map(\.name).sorted() == known.headers.map(\.name).sorted())
        let messages = try await MailWorld.messages(smtp, count: 1)
        #expect(messages.count == 1)
        #expect(messages[0]["rcpt_tos"] as? [String] == ["dora@example.com"])
        await world.server.stop()
        await smtp.stop()
    }

    @Test(
        "throttled: 3 mails an address an hour (the rest answered the same), 10 requests a client, then 429")
    func throttled() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .optional) {
            $0.mail.email.perClient = 6
        }
        try await world.user("erin", email: "erin@example.com")
        // The registration's mail counts: two more, then none.
        for _ in 0..<4 {
            let answer = try await world.requestVerification("erin@example.com")
            #expect(answer.status == 202)
            #expect(answer.text == Self.accepted)
        }
        #expect(try await MailWorld.messages(smtp, count: 3).count == 3)
        #expect(try await world.requestVerification("x1@example.com").status == 202)
        #expect(try await world.requestVerification("x2@example.com").status == 202)
        let limited = try await world.requestVerification("x3@example.com")
        #expect(limited.status == 429)
        #expect(limited.json["code"] as? String == "too_many_email_requests")
        #expect(limited.header("Retry-After") == "3600")
        world.clock.advance(seconds: 3600)
        #expect(try await world.requestVerification("erin@example.com").status == 202)
        #expect(try await MailWorld.messages(smtp, count: 4).count == 4)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("12 requests at once for one address send at most 3 mails: each is counted before it is judged")
    func concurrentRequestsKeepTheAddressLimit() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .optional) {
            $0.mail.email.perClient = 100
        }
        try await world.user("erin", email: "erin@example.com")
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask { try await world.requestVerification("erin@example.com").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: 202, count: 12))
        // Every mail there will be is queued by now: wait for the outbox to empty.
        #expect(
            await eventually {
                (try? await world.client.send("GET", "/metrics"))?.text.contains(
                    "\nroost_mail_queue_depth 0\n")
                    == true
            })
        // At most the limit: requests that all count themselves before any is judged may all be
        // over it (the registration's mail is one of the 3), never more than 3.
        let sent = world.dispatcher?.metrics.sentCount ?? 0
        #expect((1...3).contains(sent), "\(sent)")
        #expect(smtp.messages.count == sent)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("bad bodies and no SMTP server: each with its status and code")
    func refusals() async throws {
        let bare = try await MailWorld.make(smtpURL: nil, verification: .optional)
        let off = try await bare.requestVerification("a@example.com")
        #expect(off.status == 503)
        #expect(off.json["code"] as? String == "mail_not_configured")
        await bare.server.stop()

        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .optional)
        let cases: [(String, String, Int, String)] = [
            ("/ff/email/verify/request", "{}", 400, "missing_field"),
            ("/ff/email/verify/request", #"{"email":7}"#, 400, "invalid_field"),
            ("/ff/email/verify/request", #"{"email":"a@b.com\r\nBcc: x@y.com"}"#, 400, "invalid_field"),
            ("/ff/email/verify/confirm", "{}", 400, "missing_field"),
            ("/ff/email/verify/confirm", #"{"token":7}"#, 400, "invalid_email_token"),
            (
                "/ff/email/verify/confirm", #"{"token":"\#(String(repeating: "a", count: 129))"}"#, 400,
                "invalid_email_token"
            ),
            ("/ff/email/change/confirm", #"{"token":"nothing"}"#, 400, "invalid_email_token"),
            ("/ff/email/change", #"{"newEmail":"a@b.com","password":"x"}"#, 401, "login_required"),
        ]
        for (path, body, status, code) in cases {
            let answer = try await world.client.send("POST", path, json: body)
            #expect(answer.status == status, "\(path) \(body)")
            #expect(answer.json["code"] as? String == code, "\(path) \(body): \(answer.text)")
        }
        // Logged in without an address: nothing to verify; a bad new address is refused.
        let session = try #require(try await world.client.register("noaddress").json["token"] as? String)
        let none = try await world.client.send(
            "POST", "/ff/email/verify/request", json: "{}", headers: [("X-Token", session)])
        #expect(none.status == 400)
        #expect(none.json["code"] as? String == "no_email")
        for bad in ["not-an-address", "a b@example.com", "x@localhost"] {
            let refused = try await world.requestChange(session, to: bad)
            #expect(refused.status == 400, "\(bad)")
            #expect(refused.json["code"] as? String == "invalid_field", "\(bad): \(refused.text)")
        }
        let large = try await world.client.send(
            "POST", "/ff/email/verify/request", body: Array(repeating: UInt8(ascii: " "), count: 70 * 1024))
        #expect(large.status == 413)
        #expect(smtp.messages.isEmpty)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("the app definition's settings.emailVerification overrides the flag; a wrong value is refused")
    func fromDefinition() async throws {
        let definition = try AppDefinition.parse(
            Array(#"{"settings":{"emailVerification":"required"}}"#.utf8))
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off) {
            $0.appDefinition = definition
        }
        let registered = try await world.client.register("gus", extra: #","email":"gus@example.com""#)
        #expect(registered.status == 201)
        #expect(registered.json["emailVerificationRequired"] as? Bool == true)
        #expect(try await world.loginAnswer("gus").json["code"] as? String == "email_not_verified")
        #expect(try await MailWorld.messages(smtp, count: 1).count == 1)
        #expect(throws: AppDefinitionError.self) {
            try AppDefinition.parse(Array(#"{"settings":{"emailVerification":"sometimes"}}"#.utf8))
        }
        await world.server.stop()
        await smtp.stop()
    }
}
