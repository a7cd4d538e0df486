import Foundation

/// Whether registration verifies the address (`--email-verification`).
public enum EmailVerificationMode: String, Sendable, CaseIterable {
    /// No mail at registration; `/ff/email/verify/*` still verify on request.
    case off
    /// A verification mail at registration; unverified users log in.
    case optional
    /// As `optional`, and an account whose address is not verified gets no session: 403
    /// `email_not_verified`, given only after the right password.
    case required
}

/// Settings of e-mail verification and change.
public struct EmailAddressOptions: Sendable {
    public var verification = EmailVerificationMode.off
    /// Milliseconds a verification or change link works.
    public var tokenLifetime: Int64 = 24 * 60 * 60 * 1000
    /// The pages the mails link to, given `token=…`; nil: the mail holds the token as a code.
    public var verificationURL: String?
    public var changeURL: String?
    /// Verification mails one address receives per window; requests beyond it answer the same
    /// and send nothing.
    public var perAddress = 3
    /// Requests (verification or change) one client (an IPv6 /64 as one) makes per window;
    /// beyond it, 429 `too_many_email_requests`.
    public var perClient = 10
    /// Changes one user asks for per window; beyond it, 429 `too_many_email_requests`.
    public var changesPerUser = 3
    public var window: Int64 = 60 * 60 * 1000

    public init() {}
}

/// The plain text and HTML of the verification and change mails.
struct EmailMessages: Sendable {
    let composer: MailComposer
    let appName: String
    let lifetime: Int64

    private var hours: String {
        let hours = lifetime / 3_600_000
        return hours >= 1 ? "\(hours) hours" : "\(lifetime / 60_000) minutes"
    }

    static func link(_ base: String?, token: String) -> String? {
        base.map { $0 + ($0.contains("?") ? "&" : "?") + "token=" + token }
    }

    func verification(to recipient: String, token: String, link: String?, id: String, now: Int64) -> String {
        message(
            to: recipient, subject: "Confirm your \(appName) e-mail address",
            lead: "Confirm that this address belongs to your \(appName) account.",
            action: "confirm the address", button: "Confirm the address", token: token, link: link,
            tail: "It works once, for \(hours). If you have no \(appName) account, ignore this mail.", id: id,
            now: now)
    }

    func change(to recipient: String, token: String, link: String?, id: String, now: Int64) -> String {
        message(
            to: recipient, subject: "Confirm your new \(appName) e-mail address",
            lead: "Someone asked to make this the address of a \(appName) account.",
            action: "make it the account's address", button: "Use this address", token: token, link: link,
            tail:
                "It works once, for \(hours). If you did not ask for it, ignore this mail: nothing changes.",
            id: id, now: now)
    }

    /// To the old address: no link, nothing to act on but a warning.
    func changeNotice(to recipient: String, newAddress: String, id: String, now: Int64) -> String {
        let text = """
            Someone asked to change the e-mail address of your \(appName) account to \(newAddress).

            It changes once the link mailed to the new address is opened. If this was not you, change your password now: whoever asked knew it.
            """
        let html = """
            <!doctype html><html><body><p>Someone asked to change the e-mail address of your \(MailComposer.html(appName)) account to \(MailComposer.html(newAddress)).</p>
            <p>It changes once the link mailed to the new address is opened. If this was not you, change your password now: whoever asked knew it.</p></body></html>
            """
        return composer.compose(
            to: recipient, subject: "Your \(appName) e-mail address is changing", text: text, html: html,
            id: id, date: Date(timeIntervalSince1970: Double(now) / 1000))
    }

    private func message(
        to recipient: String, subject: String, lead: String, action: String, button: String, token: String,
        link: String?, tail: String, id: String, now: Int64
    ) -> String {
        let step =
            link.map { "Open this link to \(action):\n\n\($0)\n" }
            ?? "Enter this code in the app to \(action):\n\n\(token)\n"
        let text = "\(lead)\n\n\(step)\n\(tail)"
        let shown = MailComposer.html(link ?? token)
        let target =
            link.map { #"<p><a href="\#(MailComposer.html($0))">\#(button)</a></p><p>\#(shown)</p>"# }
            ?? "<p>Enter this code in the app to \(action):</p><p><code>\(shown)</code></p>"
        let html = """
            <!doctype html><html><body><p>\(MailComposer.html(lead))</p>
            \(target)<p>\(MailComposer.html(tail))</p></body></html>
            """
        return composer.compose(
            to: recipient, subject: subject, text: text, html: html, id: id,
            date: Date(timeIntervalSince1970: Double(now) / 1000))
    }
}
