import Foundation
import RoostTestSupport
import Testing

/// `roost serve`'s mail flags, on the real binary.
@Suite("Mail options of roost serve")
struct MailProcessTests {
    @Test(
        "mail flags that cannot work exit 64 with what to do",
        arguments: [
            (["--smtp-url", "smtp://127.0.0.1:2525"], "--smtp-url needs --mail-from"),
            (["--mail-from", "noreply@example.com"], "need --smtp-url"),
            (
                ["--smtp-url", "http://x", "--mail-from", "a@b.co"],
                "--smtp-url must start with smtp:// or smtps://"
            ),
            (
                ["--mail-from", "nobody"],
                "--mail-from takes an address such as noreply@example.com, not 'nobody'"
            ),
            (
                ["--smtp-starttls", "maybe"],
                "--smtp-starttls takes 'required', 'optional' or 'off', not 'maybe'"
            ),
            (["--password-reset-url", "javascript:x"], "--password-reset-url takes an http(s) URL"),
            (["--email-change-url", "javascript:x"], "--email-change-url takes an http(s) URL"),
            (
                ["--email-verification", "sometimes"],
                "--email-verification takes 'off', 'optional' or 'required', not 'sometimes'"
            ),
            (["--email-verification", "required"], "--email-verification required needs --smtp-url"),
        ])
    func usageErrors(_ arguments: [String], _ message: String) async throws {
        let result = try await runRoost(
            ["serve", "--port", "0", "--data-dir", try await makeDataFolder()] + arguments)
        #expect(result.status == 64 || result.status == 78, "\(result.errorOutput)")
        #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
    }

    @Test("the password comes from a file; a reset mail goes through the real binary's SMTP sender")
    func endToEnd() async throws {
        let smtp = try await FakeSMTP.start(user: "roost", password: "file-secret")
        let directory = try await makeDataFolder()
        let passwordFile = directory + ".smtp-password"
        try Data("file-secret\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: [
                "--smtp-url", smtp.url, "--smtp-starttls", "off", "--smtp-user", "roost",
                "--smtp-password-file",
                passwordFile, "--mail-from", "noreply@roost.test", "--mail-app-name", "Birdhouse",
            ])
        let client = TestHTTPClient(port: server.port)
        #expect(try await client.register("ivy", extra: #","email":"ivy@example.com""#).status == 201)
        let answer = try await client.send(
            "POST", "/ff/password/reset", json: #"{"email":"ivy@example.com"}"#)
        #expect(answer.status == 202)
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        #expect(message["authenticated"] as? Bool == true)
        #expect(message["subject"] as? String == "Reset your Birdhouse password")
        // Without --password-reset-url the mail holds the token as a code.
        let text = try #require(message["text"] as? String)
        let code = try #require(
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
                $0.count == 43
            })
        let done = try await client.send(
            "POST", "/ff/password/reset/confirm",
            json: #"{"token":"\#(code)","password":"a brand new passphrase"}"#)
        #expect(done.status == 200, "\(done.text)")
        #expect(try await server.stop(signal: SIGTERM) == 0)
        let log = (try? String(contentsOfFile: directory + ".log", encoding: .utf8)) ?? ""
        #expect(!log.contains("file-secret") && !log.contains(code))
        await smtp.stop()
    }

    @Test("roost mail test sends one message through the real SMTP sender, and says why when it cannot")
    func mailTest() async throws {
        let smtp = try await FakeSMTP.start(
            user: "roost", password: "env-secret", rejecting: ["nobody@example.com"])
        let options = [
            "--smtp-url", smtp.url, "--smtp-starttls", "off", "--smtp-user", "roost", "--mail-from",
            "noreply@roost.test", "--mail-app-name", "Birdhouse",
        ]
        let sent = try await runProgram(
            "/usr/bin/env",
            [
                "ROOST_SMTP_PASSWORD=env-secret", try RoostProcess.binaryPath(), "mail", "test",
                "ops@example.com",
            ] + options)
        #expect(sent.status == 0, "\(sent.errorOutput)")
        #expect(sent.output == "sent a test message to ops@example.com from noreply@roost.test\n")
        let message = try #require(try await MailWorld.messages(smtp, count: 1).first)
        #expect(message["subject"] as? String == "Birdhouse: a test message")
        #expect(message["authenticated"] as? Bool == true)
        #expect(!sent.output.contains("env-secret") && !sent.errorOutput.contains("env-secret"))

        let refused = try await runProgram(
            "/usr/bin/env",
            [
                "ROOST_SMTP_PASSWORD=env-secret", try RoostProcess.binaryPath(), "mail", "test",
                "nobody@example.com",
            ] + options)
        #expect(refused.status == 1)
        #expect(
            refused.errorOutput.hasPrefix(
                "roost: the SMTP server refused the message to nobody@example.com: "),
            "\(refused.errorOutput)")
        await smtp.stop()
        let unreachable = try await runProgram(
            "/usr/bin/env",
            [
                "ROOST_SMTP_PASSWORD=env-secret", try RoostProcess.binaryPath(), "mail", "test",
                "ops@example.com",
            ]
                + options)
        #expect(unreachable.status == 1)
        #expect(
            unreachable.errorOutput.hasPrefix("roost: the message to ops@example.com was not sent: "),
            "\(unreachable.errorOutput)")
        #expect(unreachable.errorOutput.hasSuffix("; check --smtp-url and the network\n"))

        let usage: [([String], Int32, String)] = [
            (["mail", "test"], 64, "'roost mail test' needs the ADDRESS to send to\n"),
            (
                ["mail", "test", "not-an-address"], 64,
                "'not-an-address' is not an address such as ops@example.com\n"
            ),
            (["mail", "send"], 64, "unknown action 'send'\n"),
            (["mail", "test", "ops@example.com"], 78, "no SMTP server is configured: "),
            (
                ["mail", "test", "ops@example.com", "--smtp-url", smtp.url], 64,
                "--smtp-url needs --mail-from\n"
            ),
        ]
        for (arguments, status, message) in usage {
            let result = try await runRoost(arguments)
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.hasPrefix("roost: " + message), "\(arguments): \(result.errorOutput)")
        }
        let help = try await runRoost(["help", "mail"])
        #expect(help.output.hasPrefix("Send a test message to an address through the SMTP server"))
    }
}
