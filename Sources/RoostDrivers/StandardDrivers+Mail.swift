import Foundation
import RoostCore
import RoostPush
import RoostServer

extension StandardDrivers {
    /// The SMTP sender `--smtp-*` describe, or nil without `--smtp-url`. The password comes from
    /// `--smtp-password-file`, else `ROOST_SMTP_PASSWORD` in `environment`. Throws what to fix.
    public static func mailSender(for settings: SMTPSettings, environment: [String: String])
        throws(PushConfigurationError) -> (any MailSender)?
    {
        guard let url = settings.url else { return nil }
        var configuration = SMTPConfiguration(url: url)
        configuration.username = settings.username
        configuration.caFile = settings.caFile
        configuration.startTLS = SMTPConfiguration.StartTLS(rawValue: settings.startTLS) ?? .required
        if let file = settings.passwordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw PushConfigurationError("cannot read the SMTP password file \(file)")
            }
            configuration.password = String(text.split(whereSeparator: \.isNewline).first ?? "")
        } else if settings.username != nil {
            configuration.password = environment["ROOST_SMTP_PASSWORD"]
        }
        if let problem = configuration.problem { throw PushConfigurationError(problem) }
        return SMTPMailSender(configuration: configuration)
    }
}
