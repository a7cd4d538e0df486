import Foundation
import RoostJSON
import RoostStore

/// Settings of the password-reset flow.
public struct PasswordResetOptions: Sendable {
    /// Milliseconds a reset link works.
    public var tokenLifetime: Int64 = 30 * 60 * 1000
    /// The page the mail links to; the token is appended as `token=…`. Nil: the mail gives the
    /// token as a code to paste.
    public var resetURL: String?
    /// The app's name in the mail.
    public var appName = "Roost"
    /// Reset mails one address receives per window; requests beyond it are answered the same
    /// and send nothing.
    public var perAddress = 3
    /// Reset requests one client (an IPv6 /64 as one) makes per window; beyond it, 429.
    public var perClient = 10
    public var window: Int64 = 60 * 60 * 1000

    public init() {}
}

/// Password reset by e-mail: a request stores a random token's SHA-256 and queues a mail with the
/// token in one transaction; the confirmation sets the password, ends every session and kills
/// every reset of the user. The request's answer and work are the same whether or not the address
/// belongs to an account; tokens are never logged.
public struct PasswordResetService: Sendable {
    /// The most bytes of a token accepted (ours are 43).
    public static let maximumTokenBytes = 128
    static let kind = "password_reset"

    let store: any MailStore
    let accounts: any AccountStore
    let hasher: PasswordHasher
    let clock: any WallClock
    let guids: any GuidGenerator
    let failures: any LoginFailureStore
    let options: PasswordResetOptions
    /// Nil when no mail server is configured: requests answer 503 `mail_not_configured`.
    let composer: MailComposer?
    /// Called after a mail is queued (the dispatcher's wake).
    let queued: @Sendable () -> Void

    public init(
        store: any MailStore, accounts: any AccountStore, hasher: PasswordHasher, clock: any WallClock,
        guids: any GuidGenerator, failures: any LoginFailureStore, options: PasswordResetOptions,
        composer: MailComposer?, queued: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.accounts = accounts
        self.hasher = hasher
        self.clock = clock
        self.guids = guids
        self.failures = failures
        self.options = options
        self.composer = composer
        self.queued = queued
    }

    /// Whether a mail server is configured.
    public var isConfigured: Bool { composer != nil }

    /// `POST /ff/password/reset`: the same for every address, registered or not. `client` is
    /// whom the per-client throttle counts (429 beyond it); the per-address limit sends nothing
    /// more but answers the same.
    public func request(email: String, client: String) async throws {
        guard let composer else { throw RoostError.mailNotConfigured }
        guard let address = MailAddress.validate(email) else {
            throw RoostError.invalidField("email", "email must look like name@example.com.")
        }
        let key = address.lowercased()
        let now = clock.nowMilliseconds()
        let since = now - options.window
        let clientKey = "pr:i:" + client
        let addressKey = "pr:a:" + key
        let counted = try await failures.failures(of: [clientKey, addressKey], after: since)
        if let times = counted[clientKey], times.count >= options.perClient, let oldest = times.min() {
            throw RoostError.tooManyResetRequests(
                retryAfter: max(1, Int((oldest + options.window - now + 999) / 1000)))
        }
        let addressFull = (counted[addressKey]?.count ?? 0) >= options.perAddress
        try await failures.recordFailure(
            of: addressFull ? [clientKey] : [clientKey, addressKey], at: now, droppingThrough: since)
        guard !addressFull else { return }
        // Judged again with this request counted: requests at once all read the counts before
        // any recorded itself, and would all have passed.
        let recounted = try await failures.failures(of: [clientKey, addressKey], after: since)
        if let times = recounted[clientKey], times.count > options.perClient, let oldest = times.min() {
            throw RoostError.tooManyResetRequests(
                retryAfter: max(1, Int((oldest + options.window - now + 999) / 1000)))
        }
        guard (recounted[addressKey]?.count ?? 0) <= options.perAddress else { return }
        let token = Sodium.base64URL(Sodium.randomBytes(32))
        let id = guids.makeGuid()
        let link = options.resetURL.map { url in url + (url.contains("?") ? "&" : "?") + "token=" + token }
        let mail = OutboxMail(
            id: id, kind: Self.kind, recipient: key,
            message: message(composer, to: key, token: token, link: link, id: id, now: now))
        let queuedOne = try await store.requestPasswordReset(
            emailKey: key, tokenHash: Self.hash(token), expiresAt: now + options.tokenLifetime, mail: mail,
            now: now)
        if queuedOne { queued() }
    }

    /// `POST /ff/password/reset/confirm`: sets the password of the token's user (registration's
    /// rules), ends every session of the user and every reset. 400 `invalid_reset_token` for a
    /// token unknown, used or expired.
    public func confirm(token: String, password: String) async throws {
        guard token.utf8.count <= Self.maximumTokenBytes else { throw RoostError.invalidResetToken }
        let hash = Self.hash(token)
        let now = clock.nowMilliseconds()
        guard let reset = try await store.passwordReset(tokenHash: hash), reset.expiresAt > now,
            let account = try await accounts.account(userGuid: reset.userGuid)
        else { throw RoostError.invalidResetToken }
        try AccountService.validate(password: password, userName: account.userNameKey)
        let passwordHash = try await hasher.hash(password)
        guard
            try await store.completePasswordReset(
                tokenHash: hash, passwordHash: passwordHash, now: clock.nowMilliseconds()) != nil
        else { throw RoostError.invalidResetToken }
    }

    static func hash(_ token: String) -> String { Sodium.hex(Sodium.sha256(Array(token.utf8))) }

    private func message(
        _ composer: MailComposer, to recipient: String, token: String, link: String?, id: String, now: Int64
    ) -> String {
        let minutes = options.tokenLifetime / 60_000
        let app = options.appName
        let action =
            link.map { "Open this link to choose a new password:\n\n\($0)\n" }
            ?? "Enter this code in the app to choose a new password:\n\n\(token)\n"
        let text = """
            Someone asked to reset the password of your \(app) account.

            \(action)
            It works once, for \(minutes) minutes. If you did not ask for it, ignore this mail: your password stays as it is.
            """
        let shown = MailComposer.html(link ?? token)
        let target =
            link.map {
                #"<p><a href="\#(MailComposer.html($0))">Choose a new password</a></p><p>\#(shown)</p>"#
            }
            ?? "<p>Enter this code in the app to choose a new password:</p><p><code>\(shown)</code></p>"
        let html = """
            <!doctype html><html><body><p>Someone asked to reset the password of your \(MailComposer.html(app)) account.</p>
            \(target)<p>It works once, for \(minutes) minutes. If you did not ask for it, ignore this mail: your password stays as it is.</p></body></html>
            """
        return composer.compose(
            to: recipient, subject: "Reset your \(app) password", text: text, html: html, id: id,
            date: Date(timeIntervalSince1970: Double(now) / 1000))
    }
}

extension RoostError {
    /// A route needs mail and no SMTP server is configured.
    public static let mailNotConfigured = RoostError(
        status: 503, code: .mailNotConfigured,
        message: "Mail is not configured on this server: start roost serve with --smtp-url and --mail-from.")

    /// The one answer for a reset token unknown, used or expired.
    public static let invalidResetToken = RoostError(
        status: 400, code: .invalidResetToken,
        message: "The reset link is unknown, used or expired; ask for a new one.")

    public static func tooManyResetRequests(retryAfter seconds: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyResetRequests,
            message:
                "Too many password reset requests from your address; wait \(seconds) seconds before asking again.",
            details: details(["retryAfter": .integer(Int64(seconds))])
        ).retrying(after: seconds)
    }
}
