import Foundation
import RoostJSON
import RoostStore

/// E-mail verification and change, in the password reset's shape: a random token whose SHA-256
/// alone is stored, queued with its mail in one transaction; single use, 24 hours; answers that
/// say nothing about who has an account. Confirming writes the account and its `FFUser` object
/// (`emailVerified`, and for a change `email`, and `userName` when that is the address) together.
public struct EmailAddressService: Sendable {
    static let verificationKind = "email_verification"
    static let changeKind = "email_change"
    static let noticeKind = "email_change_notice"

    let tokens: any EmailTokenStore
    let accounts: AccountService
    let failures: any LoginFailureStore
    let options: EmailAddressOptions
    /// Nil when no mail server is configured: requests answer 503 `mail_not_configured`.
    let messages: EmailMessages?
    let queued: @Sendable () -> Void

    public init(
        tokens: any EmailTokenStore, accounts: AccountService, failures: any LoginFailureStore,
        options: EmailAddressOptions, composer: MailComposer?, appName: String,
        queued: @escaping @Sendable () -> Void
    ) {
        self.tokens = tokens
        self.accounts = accounts
        self.failures = failures
        self.options = options
        self.messages = composer.map {
            EmailMessages(composer: $0, appName: appName, lifetime: options.tokenLifetime)
        }
        self.queued = queued
    }

    public var isConfigured: Bool { messages != nil }

    /// After a registration, when verification is on: mails the new address its link. Failures
    /// are the caller's to log: the account stands, and the user can ask again.
    public func registered(userGuid: String) async throws {
        guard accounts.emailVerification != .off, messages != nil,
            let key = try await accounts.accounts.account(userGuid: userGuid)?.emailKey
        else { return }
        try await sendVerification(to: key, client: nil)
    }

    /// `POST /ff/email/verify/request` by address: the same for every address.
    public func requestVerification(email: String, client: String) async throws {
        guard isConfigured else { throw RoostError.mailNotConfigured }
        guard let address = MailAddress.validate(email) else {
            throw RoostError.invalidField("email", "email must look like name@example.com.")
        }
        try await sendVerification(to: address.lowercased(), client: client)
    }

    /// `POST /ff/email/verify/request` logged in: the user's own address, if not verified yet.
    public func requestVerification(for principal: Principal, client: String) async throws {
        guard isConfigured else { throw RoostError.mailNotConfigured }
        guard let account = try await accounts.accounts.account(userGuid: principal.userGuid) else {
            throw RoostError.invalidToken
        }
        guard let key = account.emailKey else { throw RoostError.noEmail }
        try await sendVerification(to: key, client: client)
    }

    /// `POST /ff/email/verify/confirm`; returns the address verified.
    public func confirmVerification(token: String) async throws -> String {
        try await confirm(token: token, purpose: .verify)
    }

    /// `POST /ff/email/change`: checks the password (a wrong one counts against the login
    /// throttle), mails a link to the new address and a notice to the old. The same answer
    /// whether or not the new address is taken; that is told only at confirmation (409).
    public func requestChange(for principal: Principal, to newEmail: String, password: String, client: String)
        async throws
    {
        guard let account = try await accounts.accounts.account(userGuid: principal.userGuid) else {
            throw RoostError.invalidToken
        }
        // Before the server's own lack: no configuration would let this account do it.
        guard !account.passwordHash.isEmpty else { throw RoostError.passwordNotSet }
        guard let messages else { throw RoostError.mailNotConfigured }
        guard
            let typed = try? AccountService.email(
                in: JSONObject(uniqueMembers: [("email", .string(newEmail))])),
            let email = MailAddress.validate(typed)
        else { throw RoostError.invalidField("newEmail", "newEmail must look like name@example.com.") }
        let key = email.lowercased()
        guard key != account.emailKey else {
            throw RoostError.invalidField("newEmail", "newEmail is already this account's address.")
        }
        // A user name that is the address changes with it, so it must be one a user name may be.
        if account.userNameKey.contains("@") {
            do { _ = try AccountService.normalizedUserName(email) } catch let error as RoostError {
                throw RoostError.invalidField(
                    "newEmail",
                    "This account's user name is its address and changes with it: " + error.message)
            }
        }
        let now = accounts.clock.nowMilliseconds()
        let clientKey = "em:i:" + client
        let userKey = "em:u:" + account.userGuid
        let counted = try await failures.failures(of: [clientKey, userKey], after: now - options.window)
        for (key, limit) in [(clientKey, options.perClient), (userKey, options.changesPerUser)] {
            if let times = counted[key], times.count >= limit, let oldest = times.min() {
                throw RoostError.tooManyEmailRequests(retryAfter: retryAfter(oldest, now: now))
            }
        }
        try await accounts.checkPassword(password, of: account, client: client)
        try await failures.recordFailure(
            of: [clientKey, userKey], at: now, droppingThrough: now - options.window)
        // Judged again with this request counted, as verification requests are.
        let recounted = try await failures.failures(of: [clientKey, userKey], after: now - options.window)
        for (key, limit) in [(clientKey, options.perClient), (userKey, options.changesPerUser)] {
            if let times = recounted[key], times.count > limit, let oldest = times.min() {
                throw RoostError.tooManyEmailRequests(retryAfter: retryAfter(oldest, now: now))
            }
        }
        let token = Sodium.base64URL(Sodium.randomBytes(32))
        let id = accounts.guids.makeGuid()
        var mails = [
            OutboxMail(
                id: id, kind: Self.changeKind, recipient: key,
                message: messages.change(
                    to: key, token: token, link: EmailMessages.link(options.changeURL, token: token), id: id,
                    now: now))
        ]
        if let old = account.emailKey {
            let noticeId = accounts.guids.makeGuid()
            mails.append(
                OutboxMail(
                    id: noticeId, kind: Self.noticeKind, recipient: old,
                    message: messages.changeNotice(to: old, newAddress: email, id: noticeId, now: now)))
        }
        try await tokens.requestChange(
            userGuid: account.userGuid, email: email, tokenHash: Self.hash(token),
            expiresAt: now + options.tokenLifetime, mails: mails, now: now)
        queued()
    }

    /// `POST /ff/email/change/confirm`; returns the new address.
    public func confirmChange(token: String) async throws -> String {
        try await confirm(token: token, purpose: .change)
    }

    /// Counts the request against the client (429 beyond its limit; none at registration) and
    /// the address (beyond its limit: nothing sent, the same answer), then queues the mail if an
    /// unverified account has the address.
    private func sendVerification(to key: String, client: String?) async throws {
        guard let messages else { throw RoostError.mailNotConfigured }
        let now = accounts.clock.nowMilliseconds()
        let since = now - options.window
        let clientKey = client.map { "em:i:" + $0 }
        let addressKey = "ev:a:" + key
        let counted = try await failures.failures(
            of: [clientKey, addressKey].compactMap { $0 }, after: since)
        if let clientKey, let times = counted[clientKey], times.count >= options.perClient,
            let oldest = times.min()
        {
            throw RoostError.tooManyEmailRequests(retryAfter: retryAfter(oldest, now: now))
        }
        let addressFull = (counted[addressKey]?.count ?? 0) >= options.perAddress
        let counting = [clientKey, addressFull ? nil : addressKey].compactMap { $0 }
        if !counting.isEmpty {
            try await failures.recordFailure(of: counting, at: now, droppingThrough: since)
        }
        guard !addressFull else { return }
        // Judged again with this request counted: requests at once all read the counts before
        // any recorded itself, and would all have passed (12 at once sent 12 mails, not 3).
        let recounted = try await failures.failures(of: counting, after: since)
        if let clientKey, let times = recounted[clientKey], times.count > options.perClient,
            let oldest = times.min()
        {
            throw RoostError.tooManyEmailRequests(retryAfter: retryAfter(oldest, now: now))
        }
        guard (recounted[addressKey]?.count ?? 0) <= options.perAddress else { return }
        let token = Sodium.base64URL(Sodium.randomBytes(32))
        let id = accounts.guids.makeGuid()
        let mail = OutboxMail(
            id: id, kind: Self.verificationKind, recipient: key,
            message: messages.verification(
                to: key, token: token, link: EmailMessages.link(options.verificationURL, token: token),
                id: id,
                now: now))
        if try await tokens.requestVerification(
            emailKey: key, tokenHash: Self.hash(token), expiresAt: now + options.tokenLifetime, mail: mail,
            now: now)
        {
            queued()
        }
    }

    private func confirm(token: String, purpose: EmailTokenPurpose) async throws -> String {
        guard token.utf8.count <= PasswordResetService.maximumTokenBytes else {
            throw RoostError.invalidEmailToken
        }
        let hash = Self.hash(token)
        let users = AccountService.userCollection
        for _ in 0..<ObjectService.writeAttempts {
            let now = accounts.clock.nowMilliseconds()
            guard let record = try await tokens.emailToken(tokenHash: hash), record.purpose == purpose,
                record.expiresAt > now,
                let account = try await accounts.accounts.account(userGuid: record.userGuid),
                let user = try await accounts.objects.object(in: users, guid: record.userGuid)
            else { throw RoostError.invalidEmailToken }
            let key = record.email.lowercased()
            // The address changed since the mail: the link verifies an address the account no
            // longer has.
            if purpose == .verify, account.emailKey != key { throw RoostError.invalidEmailToken }
            var (fields, _) = try ObjectService.split(user.document)
            fields["emailVerified"] = .bool(true)
            var userNameKey: String?
            if purpose == .change {
                fields["email"] = .string(record.email)
                if account.userNameKey.contains("@") {
                    fields["userName"] = .string(record.email)
                    userNameKey = key
                }
            }
            var next = ObjectService.makeObject(
                collection: users, guid: user.guid, fields: fields, createdBy: user.createdBy,
                createdAt: user.createdAt, updatedBy: user.guid, updatedAt: max(now, user.updatedAt),
                version: user.version + 1)
            next.acl = user.acl
            do {
                guard
                    try await tokens.confirm(
                        EmailConfirmation(
                            tokenHash: hash, purpose: purpose, emailKey: key, userNameKey: userNameKey,
                            user: next, expectedVersion: user.version, now: now))
                else { throw RoostError.invalidEmailToken }
                return record.email
            } catch StoreError.versionChanged {
                continue
            } catch AccountConflict.email {
                throw RoostError.taken("email")
            }
        }
        throw RoostError.writeContention(collection: users, guid: "", attempts: ObjectService.writeAttempts)
    }

    private func retryAfter(_ oldest: Int64, now: Int64) -> Int {
        max(1, Int((oldest + options.window - now + 999) / 1000))
    }

    static func hash(_ token: String) -> String { Sodium.hex(Sodium.sha256(Array(token.utf8))) }
}

extension RoostError {
    /// The one answer for an e-mail token unknown, used or expired.
    public static let invalidEmailToken = RoostError(
        status: 400, code: .invalidEmailToken,
        message: "The confirmation link is unknown, used or expired; ask for a new one.")

    /// `required` verification, after the right password.
    public static let emailNotVerified = RoostError(
        status: 403, code: .emailNotVerified,
        message:
            "Confirm your e-mail address first: open the link mailed to it, or ask for a new one at /ff/email/verify/request."
    )

    static let noEmail = RoostError(
        status: 400, code: .noEmail,
        message: "This account has no e-mail address to verify; add one with /ff/email/change.")

    /// An account made by signing in with a provider has no password to confirm a change with.
    static let passwordNotSet = RoostError(
        status: 403, code: .passwordNotSet,
        message:
            "This account has no password (it signs in with a provider), so its e-mail address cannot be changed here."
    )

    public static func tooManyEmailRequests(retryAfter seconds: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyEmailRequests,
            message: "Too many e-mail requests; wait \(seconds) seconds before asking again.",
            details: details(["retryAfter": .integer(Int64(seconds))])
        ).retrying(after: seconds)
    }
}
