import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// `ff.sendEmail` / `ff.sendSMTPEmail` in FatFractal's shape (gkc/fatfractal-code-samples'
/// PasswordReset passes its own SMTP server and password): sent through Roost's own mail server
/// from its own address, bounded, and never a relay.
@Suite("Scripts send mail")
struct ScriptMailTests {
    static let module = #"""
        var ff = require('ffef/FatFractal');

        // What FatFractal's PasswordReset sample sends, server settings and all.
        exports.reset = function () {
            var data = ff.getExtensionRequestData().httpParameters;
            return ff.sendEmail({host: 'smtp.elsewhere.test', port: '465', auth: 'true', authPort: '465',
                username: 'someone@elsewhere.test', password: 'sample-smtp-secret', from: 'ceo@bank.test',
                fromName: data.name || 'Birdhouse', to: data.to, subject: 'Password Reset',
                text: 'If you wish to reset your password, please click here: https://app.test/r'});
        };

        // Whatever the caller asks for, to report the error.
        exports.send = function () {
            var message = JSON.parse(ff.getExtensionRequestData().httpParameters.message);
            try {
                return ff.sendSMTPEmail(message);
            } catch (e) {
                return {statusCode: e.statusCode, code: e.code, message: e.statusMessage};
            }
        };

        exports.many = function () {
            var count = parseInt(ff.getExtensionRequestData().httpParameters.count, 10);
            for (var i = 0; i < count; i++) {
                try {
                    ff.sendEmail({to: 'n' + i + '@roost.test', subject: 'n ' + i, text: 'hi'});
                } catch (e) {
                    return {sent: i, statusCode: e.statusCode, code: e.code};
                }
            }
            return {sent: count};
        };
        """#

    static func definition() throws -> AppDefinition {
        var definition = AppDefinition()
        definition.scripts.modules = ["scripts/Mail": module]
        for name in ["reset", "send", "many"] {
            definition.scripts.extensions[name] = ScriptExtension(
                name: name, secured: false, entry: ScriptEntry(module: "scripts/Mail", function: name))
        }
        return definition
    }

    static func world(_ smtp: FakeSMTP?, perHour: Int = 1000) async throws
        -> MailWorld
    {
        let definition = try definition()
        return try await MailWorld.make(smtpURL: smtp?.url) {
            $0.appDefinition = definition
            $0.mail.scriptMailsPerHour = perHour
        }
    }

    @Test(
        "FatFractal's call is sent through Roost's server from Roost's address; its server and password are ignored, never logged"
    )
    func fatFractalsCallIsSentThroughRoost() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await Self.world(smtp)
        defer {
            Task {
                await world.server.stop(); await smtp.stop()
            }
        }
        let sent = try await world.client.send("POST", "/ff/ext/reset?to=ada@roost.test")
        #expect(sent.status == 200, "\(sent.text)")
        let result = try #require(sent.json["result"] as? [String: Any], "\(sent.text)")
        #expect(result["queued"] as? Int == 1)
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        #expect(message["rcpt_tos"] as? [String] == ["ada@roost.test"])
        #expect(message["mail_from"] as? String == MailWorld.from)
        #expect(message["subject"] as? String == "Password Reset")
        #expect(
            message["text"] as? String
                == "If you wish to reset your password, please click here: https://app.test/r")
        #expect((message["from"] as? String)?.hasSuffix("<\(MailWorld.from)>") == true, "\(message)")
        #expect(world.logs.text.contains("ignores auth, authPort, from, host, password, port, username"))
        #expect(!world.logs.text.contains("sample-smtp-secret"))
    }

    @Test("a display name cannot add an address: quotes, brackets and commas are encoded")
    func displayNamesAreEncoded() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await Self.world(smtp)
        defer {
            Task {
                await world.server.stop(); await smtp.stop()
            }
        }
        let name = #"Bank" <ceo@bank.test>, "x"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let sent = try await world.client.send("POST", "/ff/ext/reset?to=ada@roost.test&name=\(name)")
        #expect(sent.status == 200, "\(sent.text)")
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        // A mail program reads one address, Roost's, under the name as given.
        #expect(message["from_addresses"] as? [String] == [MailWorld.from], "\(message)")
        #expect(message["from_names"] as? [String] == [#"Bank" <ceo@bank.test>, "x"#], "\(message)")
    }

    @Test("bad messages: each a 400 naming its problem, and nothing queued")
    func badMessages() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await Self.world(smtp)
        defer {
            Task {
                await world.server.stop(); await smtp.stop()
            }
        }
        let long = String(repeating: "x", count: 501)
        let cases: [(String, String)] = [
            (#"{"subject":"s","text":"t"}"#, "needs 'to': an address or an array of addresses"),
            (
                #"{"to":"nobody","subject":"s","text":"t"}"#,
                "has a 'to' that is not an address like name@example.com"
            ),
            (
                #"{"to":"a@b.test\r\nRCPT TO:<x@y.test>","subject":"s","text":"t"}"#,
                "has a 'to' that is not an address like name@example.com"
            ),
            (#"{"to":[],"subject":"s","text":"t"}"#, "names 0 recipients in 'to'; one call sends to 1 to 10"),
            (#"{"to":"a@b.test","text":"t"}"#, "needs a 'subject'"),
            (
                #"{"to":"a@b.test","subject":"s\r\nBcc: x@y.test","text":"t"}"#,
                "has a 'subject' over 500 bytes or with a line break or control character"
            ),
            (
                #"{"to":"a@b.test","subject":"\#(long)","text":"t"}"#,
                "has a 'subject' over 500 bytes or with a line break or control character"
            ),
            (#"{"to":"a@b.test","subject":"s"}"#, "needs a 'text' (and may add 'html')"),
            (
                #"{"to":"a@b.test","bcc":"x@y.test","subject":"s","text":"t"}"#,
                "has 'bcc', which Roost does not send: name every recipient in 'to'"
            ),
        ]
        let many = (0..<11).map { #""n\#($0)@b.test""# }.joined(separator: ",")
        for (body, problem) in cases + [
            (
                #"{"to":[\#(many)],"subject":"s","text":"t"}"#,
                "names 11 recipients in 'to'; one call sends to 1 to 10"
            )
        ] {
            let encoded = body.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let answer = try await world.client.send("POST", "/ff/ext/send?message=\(encoded)")
            let result = try #require(answer.json["result"] as? [String: Any], "\(answer.text)")
            #expect(result["statusCode"] as? Int == 400, "\(body)")
            #expect(result["code"] as? String == "invalid_script_argument", "\(body)")
            #expect(result["message"] as? String == "Argument 1 of ff.sendSMTPEmail \(problem).", "\(body)")
        }
        // Nothing of those was queued: the one good message after them is the only one sent.
        let good = try await world.client.send("POST", "/ff/ext/reset?to=last@roost.test")
        #expect(good.status == 200)
        let messages = try await MailWorld.messages(smtp, count: 1)
        #expect(messages.count == 1)
        #expect(messages.first?["rcpt_tos"] as? [String] == ["last@roost.test"])
    }

    @Test(
        "at most 20 messages a run and --script-mails-per-hour an hour (429 too_many_mails with Retry-After); without SMTP 501"
    )
    func limits() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await Self.world(smtp, perHour: 25)
        defer {
            Task {
                await world.server.stop(); await smtp.stop()
            }
        }
        let run = try await world.client.send("POST", "/ff/ext/many?count=25")
        let capped = try #require(run.json["result"] as? [String: Any], "\(run.text)")
        #expect(capped["sent"] as? Int == 20)
        #expect(capped["statusCode"] as? Int == 429)
        #expect(capped["code"] as? String == "too_many_mails")
        // (Delivery is not waited for: the bounds are the script's, whatever the mail server does.)
        // The hour's 25th message is the last one until the next hour.
        let second = try await world.client.send("POST", "/ff/ext/many?count=20")
        let hourly = try #require(second.json["result"] as? [String: Any], "\(second.text)")
        #expect(hourly["sent"] as? Int == 5)
        #expect(hourly["statusCode"] as? Int == 429)
        #expect(hourly["code"] as? String == "too_many_mails")
        world.clock.advance(seconds: 3600)
        let later = try await world.client.send("POST", "/ff/ext/many?count=3")
        #expect((later.json["result"] as? [String: Any])?["sent"] as? Int == 3, "\(later.text)")

        let unconfigured = try await Self.world(nil)
        defer { Task { await unconfigured.server.stop() } }
        let refused = try await unconfigured.client.send("POST", "/ff/ext/many?count=1")
        let result = try #require(refused.json["result"] as? [String: Any], "\(refused.text)")
        #expect(result["statusCode"] as? Int == 501)
        #expect(result["code"] as? String == "not_configured")
    }

    @Test("mail's counters and the outbox depth are on /metrics, the depth read at the scrape")
    func mailMetrics() async throws {
        let smtp = try await FakeSMTP.start()
        let world = try await Self.world(smtp)
        defer {
            Task {
                await world.server.stop(); await smtp.stop()
            }
        }
        let sent = try await world.client.send("POST", "/ff/ext/many?count=2")
        #expect((sent.json["result"] as? [String: Any])?["sent"] as? Int == 2, "\(sent.text)")
        _ = try await MailWorld.messages(smtp, count: 2)
        #expect(await eventually { world.dispatcher?.metrics.sentCount == 2 })
        let metrics = try await world.client.send("GET", "/metrics").text
        #expect(metrics.contains("\nroost_mail_sent_total 2\n"), "\(metrics)")
        #expect(metrics.contains("\nroost_mail_failed_total 0\n"))
        #expect(metrics.contains("\nroost_mail_queue_depth 0\n"))
        // The server gone: the next message waits in the outbox, and the scrape says so.
        await smtp.stop()
        _ = try await world.client.send("POST", "/ff/ext/many?count=1")
        let waiting = try await world.client.send("GET", "/metrics").text
        #expect(waiting.contains("\nroost_mail_queue_depth 1\n"), "\(waiting)")
    }
}
