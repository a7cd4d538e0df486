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
        ServeOption(
            flag: "--email-verification", variable: "ROOST_EMAIL_VERIFICATION", valueName: "MODE",
            help:
                "'off' (default), 'optional' (mail a link at registration) or 'required' (no session before it is opened)"
        ) {
            guard let mode = EmailVerificationMode(rawValue: $1) else {
                throw UsageError(
                    message: "--email-verification takes 'off', 'optional' or 'required', not '\($1)'")
            }
            $0.mail.email.verification = mode
        },
        ServeOption(
            flag: "--email-verification-url", variable: "ROOST_EMAIL_VERIFICATION_URL", valueName: "URL",
            help: "the page a verification mail links to, given ?token=…; without it the mail holds a code"
        ) { $0.mail.email.verificationURL = try linkBase("--email-verification-url", $1) },
        ServeOption(
            flag: "--email-change-url", variable: "ROOST_EMAIL_CHANGE_URL", valueName: "URL",
            help: "the page an address-change mail links to, given ?token=…; without it the mail holds a code"
        ) { $0.mail.email.changeURL = try linkBase("--email-change-url", $1) },
    ]

    /// A link base: an http(s) URL without spaces or control characters.
    static func linkBase(_ flag: String, _ value: String) throws -> String {
        guard value.hasPrefix("https://") || value.hasPrefix("http://"),
            !value.unicodeScalars.contains(where: { $0.value < 33 })
        else { throw UsageError(message: "\(flag) takes an http(s) URL, not '\(value)'") }
        return value
    }

    /// The mail options that only make sense together.
    static func checkMail(_ configuration: ServerConfiguration) throws {
        let smtp = configuration.mail.smtp
        guard smtp.url != nil else {
            if configuration.mail.email.verification == .required {
                throw UsageError(
                    message: "--email-verification required needs --smtp-url: nobody could log in")
            }
            if smtp.username != nil || smtp.passwordFile != nil || configuration.mail.from != nil {
                throw UsageError(message: "--smtp-user, --smtp-password-file and --mail-from need --smtp-url")
            }
            return
        }
        if configuration.mail.from == nil { throw UsageError(message: "--smtp-url needs --mail-from") }
    }
}
