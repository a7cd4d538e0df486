import Foundation
import RoostCore
import RoostDrivers
import RoostServer

func mailHelp() -> String {
    var lines = [
        "Send a test message to an address through the SMTP server, as the server would.",
        "",
        "USAGE:",
        "  roost mail test ADDRESS [mail options]",
        "",
        "OPTIONS:",
    ]
    lines += ServeOption.helpLines(ServeOption.mail)
    lines += [
        "  -h, --help                    show this help",
        "",
        "The options and their ROOST_* variables are those of 'roost serve', so the check uses the",
        "server's own settings. One message goes now, straight to the SMTP server (nothing goes into",
        "the mail outbox and nothing is retried), and the server's answer is printed. Needs no data",
        "folder or database. Exit status: 0 when the server took the message, 1 when it refused it or",
        "could not be reached, 64 on a usage error, 78 when the mail settings cannot work.",
        "",
        "EXAMPLE:",
        "  roost mail test ops@example.com --smtp-url smtp://mail.example.com:587 \\",
        "      --smtp-user roost --smtp-password-file /etc/roost/smtp-password --mail-from noreply@example.com",
    ]
    return lines.joined(separator: "\n")
}

/// `roost mail test ADDRESS`: returns the exit status.
func mail(_ arguments: [String]) async -> Int32 {
    if arguments.isEmpty || arguments.contains(where: { ["-h", "--help", "help"].contains($0) }) {
        print(mailHelp())
        return 0
    }
    guard arguments[0] == "test" else {
        printError("unknown action '\(arguments[0])'\nRun 'roost mail --help' for the usage.")
        return 64
    }
    guard arguments.count >= 2, !arguments[1].hasPrefix("--") else {
        printError("'roost mail test' needs the ADDRESS to send to\nRun 'roost mail --help' for the usage.")
        return 64
    }
    guard let recipient = MailAddress.validate(arguments[1]) else {
        printError("'\(arguments[1])' is not an address such as ops@example.com")
        return 64
    }
    let environment = ProcessInfo.processInfo.environment
    let configuration: ServerConfiguration
    do {
        configuration = try ServeOption.configuration(
            arguments: Array(arguments.dropFirst(2)), environment: environment, options: ServeOption.mail)
        try ServeOption.checkMail(configuration)
    } catch let error as UsageError {
        printError("\(error.message)\nRun 'roost mail --help' for the options.")
        return 64
    } catch {
        printError("\(error)")
        return 64
    }
    let sender: any MailSender
    do {
        guard
            let made = try StandardDrivers.mailSender(for: configuration.mail.smtp, environment: environment),
            let from = configuration.mail.from
        else {
            printError(
                "no SMTP server is configured: give --smtp-url and --mail-from (or ROOST_SMTP_URL and ROOST_MAIL_FROM)"
            )
            return 78
        }
        sender = made
        let app = configuration.mail.reset.appName
        let text = "This is a test message from roost mail test: \(app) can send mail through this server."
        let message = MailComposer(from: from, fromName: app).compose(
            to: recipient, subject: "\(app): a test message", text: text,
            html: "<p>\(MailComposer.html(text))</p>", id: UUID().uuidString.lowercased(), date: Date())
        let outcome = await sender.send(from: from, to: recipient, message: message)
        await sender.shutdown()
        switch outcome {
        case .delivered:
            say("sent a test message to \(recipient) from \(from)")
            return 0
        case .retry(let reason):
            printError(
                "the message to \(recipient) was not sent: \(reason); check --smtp-url and the network")
            return 1
        case .rejected(let reason):
            printError("the SMTP server refused the message to \(recipient): \(reason)")
            return 1
        }
    } catch {
        printError("cannot send: \(error.description)")
        return 78
    }
}
