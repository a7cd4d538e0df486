import RoostCore
import RoostServer

/// `roost serve` options for mail: the SMTP server, the sender and password reset.
extension ServeOption {
    static let mail: [ServeOption] = [
        ServeOption(
            flag: "--smtp-url", variable: "ROOST_SMTP_URL", valueName: "URL",
            help: "the SMTP server: smtp://host:587 (STARTTLS) or smtps://host:465 (implicit TLS)"
        ) { $0.mail.smtp.url = $1 },
        ServeOption(
            flag: "--smtp-user", variable: "ROOST_SMTP_USER", valueName: "NAME",
            help: "the SMTP login; its password comes from --smtp-password-file or ROOST_SMTP_PASSWORD"
        ) { $0.mail.smtp.username = $1 },
        ServeOption(
            flag: "--smtp-password-file", variable: "ROOST_SMTP_PASSWORD_FILE", valueName: "PATH",
            help: "a file holding the SMTP password (one line)"
        ) { $0.mail.smtp.passwordFile = $1 },
        ServeOption(
            flag: "--smtp-starttls", variable: "ROOST_SMTP_STARTTLS", valueName: "MODE",
            help: "smtp:// only: 'required' (default), 'optional', or 'off' (a relay on this machine)"
        ) {
            guard ["required", "optional", "off"].contains($1) else {
                throw UsageError(
                    message: "--smtp-starttls takes 'required', 'optional' or 'off', not '\($1)'")
            }
            $0.mail.smtp.startTLS = $1
        },
        ServeOption(
            flag: "--smtp-ca-file", variable: "ROOST_SMTP_CA_FILE", valueName: "PATH",
            help: "PEM certificates to trust for the SMTP server instead of the system's"
        ) { $0.mail.smtp.caFile = $1 },
        ServeOption(
            flag: "--mail-from", variable: "ROOST_MAIL_FROM", valueName: "ADDRESS",
            help: "the address mail is sent from, such as noreply@example.com"
        ) {
            guard let address = MailAddress.validate($1) else {
                throw UsageError(
                    message: "--mail-from takes an address such as noreply@example.com, not '\($1)'")
            }
            $0.mail.from = address
        },
        ServeOption(
            flag: "--mail-app-name", variable: "ROOST_MAIL_APP_NAME", valueName: "NAME",
            help: "the app's name in mail (default Roost)"
        ) {
            guard !$1.isEmpty, $1.count <= 64, !$1.unicodeScalars.contains(where: { $0.value < 32 }) else {
                throw UsageError(message: "--mail-app-name takes 1 to 64 characters without line breaks")
            }
            $0.mail.reset.appName = $1
        },
        ServeOption(
            flag: "--script-mails-per-hour", variable: "ROOST_SCRIPT_MAILS_PER_HOUR", valueName: "N",
            help:
                "messages scripts' ff.sendEmail may queue per hour on this server, 0 to 100000 (default 1000); beyond, 429 too_many_mails"
        ) {
            guard let count = Int($1), (0...100_000).contains(count) else {
                throw UsageError(
                    message: "--script-mails-per-hour takes a number from 0 to 100000, not '\($1)'")
            }
            $0.mail.scriptMailsPerHour = count
        },
        ServeOption(
            flag: "--password-reset-url", variable: "ROOST_PASSWORD_RESET_URL", valueName: "URL",
            help:
                "the page a reset mail links to, given ?token=…; without it the mail holds the token as a code"
        ) {
            guard $1.hasPrefix("https://") || $1.hasPrefix("http://"),
                !$1.unicodeScalars.contains(where: { $0.value < 33 })
            else { throw UsageError(message: "--password-reset-url takes an http(s) URL, not '\($1)'") }
            $0.mail.reset.resetURL = $1
        },
    ]

    /// The mail options that only make sense together.
    static func checkMail(_ configuration: ServerConfiguration) throws {
        let smtp = configuration.mail.smtp
        guard smtp.url != nil else {
            if smtp.username != nil || smtp.passwordFile != nil || configuration.mail.from != nil {
                throw UsageError(message: "--smtp-user, --smtp-password-file and --mail-from need --smtp-url")
            }
            return
        }
        if configuration.mail.from == nil { throw UsageError(message: "--smtp-url needs --mail-from") }
    }
}
