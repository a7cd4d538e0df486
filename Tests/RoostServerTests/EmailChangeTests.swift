import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Issue 29, item 2: e-mail change, confirmed at the new address and told to the old one.
@Suite("E-mail change")
struct EmailChangeTests {
    static let accepted =
        #"{"accepted":true,"message":"A confirmation link is on its way to the new address; the address changes once it is opened."}"#

    @Test("a notice at the old address, a link at the new; then login by the new works and the old not")
    func endToEnd() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        try await world.user("alice", email: "alice@old.example")
        let session = try await world.client.login("alice")
        let asked = try await world.requestChange(session, to: "Alice@New.example")
        #expect(asked.status == 202)
        #expect(asked.text == Self.accepted)
        let messages = try await MailWorld.messages(smtp, count: 2)
        let link = try #require(messages.first { $0["rcpt_tos"] as? [String] == ["alice@new.example"] })
        let notice = try #require(messages.first { $0["rcpt_tos"] as? [String] == ["alice@old.example"] })
        #expect(link["subject"] as? String == "Confirm your new Birdhouse e-mail address")
        #expect(notice["subject"] as? String == "Your Birdhouse e-mail address is changing")
        #expect(MailWorld.token(in: notice) == nil)
        #expect((notice["text"] as? String)?.contains("Alice@New.example") == true)
        let token = try #require(MailWorld.token(in: link))
        #expect((link["text"] as? String)?.contains(MailWorld.changeURL + "?token=" + token) == true)
        #expect(
            (link["html"] as? String)?.contains(#"href="\#(MailWorld.changeURL)?token=\#(token)""#) == true)
        // Nothing changes before the link is opened.
        #expect(try await world.sessionUser(session)["email"] as? String == "alice@old.example")
        // A change token is no verification token.
        #expect(try await world.confirmVerification(token).json["code"] as? String == "invalid_email_token")

        let done = try await world.confirmChange(token)
        #expect(done.status == 200)
        #expect(done.text == #"{"changed":true,"email":"Alice@New.example"}"#)
        let user = try await world.sessionUser(session)
        #expect(user["email"] as? String == "Alice@New.example")
        #expect(user["emailVerified"] as? Bool == true)
        #expect(user["userName"] as? String == "alice")
        let byNew = try await world.loginAnswer("alice@new.example")
        #expect(byNew.status == 200)
        let byOld = try await world.loginAnswer("alice@old.example")
        #expect(byOld.status == 401)
        #expect(byOld.json["code"] as? String == "invalid_credentials")
        // Used once.
        let again = try await world.confirmChange(token)
        #expect(again.status == 400)
        #expect(again.json["code"] as? String == "invalid_email_token")
        // The old address can no longer reset the password; the new one can.
        #expect(try await world.requestReset("alice@old.example").status == 202)
        #expect(try await world.requestReset("alice@new.example").status == 202)
        let resets = try await MailWorld.messages(smtp, count: 3)
        #expect(resets.count == 3)
        #expect(resets[2]["rcpt_tos"] as? [String] == ["alice@new.example"])
        #expect(!world.logs.text.contains(token))
        await world.server.stop()
        await smtp.stop()
    }

    @Test("a taken address: the same 202 at the request, 409 at confirmation; a wrong password sends nothing")
    func takenAndWrongPassword() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        try await world.user("bob", email: "bob@example.com")
        try await world.user("ben", email: "ben@example.com")
        let session = try await world.client.login("bob")
        let wrong = try await world.requestChange(
            session, to: "free@example.com", password: "not the password")
        #expect(wrong.status == 401)
        #expect(wrong.json["code"] as? String == "invalid_credentials")
        let taken = try await world.requestChange(session, to: "BEN@example.com")
        #expect(taken.status == 202)
        #expect(taken.text == Self.accepted)
        let messages = try await MailWorld.messages(smtp, count: 2)
        let link = try #require(messages.first { $0["rcpt_tos"] as? [String] == ["ben@example.com"] })
        let conflict = try await world.confirmChange(try #require(MailWorld.token(in: link)))
        #expect(conflict.status == 409)
        #expect(conflict.json["code"] as? String == "conflict")
        #expect(try await world.sessionUser(session)["email"] as? String == "bob@example.com")
        let same = try await world.requestChange(session, to: "Bob@example.com")
        #expect(same.status == 400)
        #expect(same.json["code"] as? String == "invalid_field")
        #expect(smtp.messages.count == 2)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("a password change ends the e-mail changes asked for before it")
    func passwordChangesEndPendingChanges() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        try await world.user("alice", email: "alice@old.example")
        let session = try await world.client.login("alice")
        #expect(try await world.requestChange(session, to: "thief@new.example").status == 202)
        let link = try #require(
            try await MailWorld.messages(smtp, count: 2).first {
                $0["rcpt_tos"] as? [String] == ["thief@new.example"]
            })
        let token = try #require(MailWorld.token(in: link))
        // Alice sees the notice and changes her password: the pending change dies with the old one.
        let changed = try await world.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"battery staple"}"#,
            headers: [("X-Token", session)])
        #expect(changed.status == 200 || changed.status == 204, "\(changed.text)")
        let confirm = try await world.confirmChange(token)
        #expect(confirm.status == 400)
        #expect(confirm.json["code"] as? String == "invalid_email_token")
        #expect(try await world.loginAnswer("alice@old.example", password: "battery staple").status == 200)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("a user name that is the address changes with it")
    func addressUserName() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        #expect(try await world.client.register("grace@navy.example").status == 201)
        let session = try await world.client.login("grace@navy.example")
        #expect(try await world.requestChange(session, to: "grace@retired.example").status == 202)
        let link = try #require(
            try await MailWorld.messages(smtp, count: 2).first {
                $0["rcpt_tos"] as? [String] == ["grace@retired.example"]
            })
        #expect(try await world.confirmChange(try #require(MailWorld.token(in: link))).status == 200)
        let user = try await world.sessionUser(session)
        #expect(user["userName"] as? String == "grace@retired.example")
        #expect(user["email"] as? String == "grace@retired.example")
        #expect(try await world.loginAnswer("grace@retired.example").status == 200)
        #expect(try await world.loginAnswer("grace@navy.example").status == 401)
        // The old name is free again.
        #expect(try await world.client.register("grace@navy.example").status == 201)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("throttled: 3 changes a user an hour, then 429 with Retry-After; links expire after 24 hours")
    func throttledAndExpiring() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await MailWorld.make(smtpURL: smtp.url, verification: .off)
        try await world.user("dan", email: "dan@example.com")
        let session = try await world.client.login("dan")
        for index in 0..<3 {
            #expect(try await world.requestChange(session, to: "dan\(index)@example.com").status == 202)
        }
        let limited = try await world.requestChange(session, to: "dan9@example.com")
        #expect(limited.status == 429)
        #expect(limited.json["code"] as? String == "too_many_email_requests")
        #expect(limited.header("Retry-After") == "3600")
        let messages = try await MailWorld.messages(smtp, count: 6)
        let link = try #require(messages.first { $0["rcpt_tos"] as? [String] == ["dan0@example.com"] })
        world.clock.advance(seconds: 24 * 3600)
        let late = try await world.confirmChange(try #require(MailWorld.token(in: link)))
        #expect(late.status == 400)
        #expect(late.json["code"] as? String == "invalid_email_token")
        #expect(try await world.requestChange(session, to: "dan9@example.com").status == 202)
        await world.server.stop()
        await smtp.stop()
    }

    @Test("an account with no password (Sign in with Apple) is refused with 403 password_not_set")
    func noPassword() async throws {
        let world = try await SignInWorld.make()
        let signedIn = try await world.signIn(email: "apple@example.com", emailVerified: "true")
        #expect(signedIn.status == 201, "\(signedIn.text)")
        let session = try #require(signedIn.json["token"] as? String)
        let refused = try await world.server.client.send(
            "POST", "/ff/email/change", json: #"{"newEmail":"new@example.com","password":"anything at all"}"#,
            headers: [("X-Token", session)])
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "password_not_set")
        await world.server.stop()
    }
}
