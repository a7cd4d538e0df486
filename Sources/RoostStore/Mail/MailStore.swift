/// One message in the mail outbox, written in the transaction that caused it.
public struct OutboxMail: Sendable, Equatable {
    public var id: String
    /// What the message is for (`password_reset`), for logs and metrics; never its content.
    public var kind: String
    /// The envelope recipient.
    public var recipient: String
    /// The whole RFC 5322 message (headers and body, CRLF line ends).
    public var message: String

    public init(id: String, kind: String, recipient: String, message: String) {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.message = message
    }
}

/// A message claimed by a dispatcher to send.
public struct MailDelivery: Sendable, Equatable {
    public var id: String
    public var kind: String
    public var recipient: String
    public var message: String
    /// Sends tried so far, this one included.
    public var attempts: Int
    /// A previous dispatcher marked it in flight and never recorded its answer.
    public var uncertain: Bool

    public init(id: String, kind: String, recipient: String, message: String, attempts: Int, uncertain: Bool)
    {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.message = message
        self.attempts = attempts
        self.uncertain = uncertain
    }
}

/// What a dispatcher records after a send. A finished message's text is erased: it may carry a
/// single-use link.
public enum MailRecordedOutcome: Sendable, Equatable {
    case delivered
    /// Retry at `nextAttempt` (milliseconds), or give up when nil.
    case retry(nextAttempt: Int64?, reason: String)
    /// The server refused it for good (a 5xx answer).
    case rejected(reason: String)
}

/// One outbox row as tests and operators see it (no message text).
public struct MailStatus: Sendable, Equatable {
    public var id: String
    public var kind: String
    /// `pending`, `sending`, `delivered`, `failed` or `rejected`.
    public var state: String
    public var attempts: Int
    public var error: String?
}

/// A live password reset, found by its token's hash.
public struct PasswordResetRecord: Sendable, Equatable {
    public var userGuid: String
    public var expiresAt: Int64
}

/// The mail outbox and the password-reset tokens, on the database the accounts are in.
public protocol MailStore: Sendable {
    /// Queues a message on its own.
    func enqueue(_ mail: OutboxMail, now: Int64) async throws

    /// In one transaction: when an account has `emailKey`, stores a reset token (its hash only)
    /// for it and queues `mail`; otherwise writes nothing. Returns whether it was queued.
    func requestPasswordReset(
        emailKey: String, tokenHash: String, expiresAt: Int64, mail: OutboxMail, now: Int64
    ) async throws -> Bool

    /// The reset whose token hashes to `tokenHash`, expired or not.
    func passwordReset(tokenHash: String) async throws -> PasswordResetRecord?

    /// In one transaction, if the reset is still live at `now`: deletes every reset of its user,
    /// sets the password hash and deletes every session token of the user. Returns the user, or
    /// nil when the token is unknown, used or expired.
    func completePasswordReset(tokenHash: String, passwordHash: String, now: Int64) async throws -> String?

    /// Takes or renews the dispatch lease for `holder`.
    func claimLease(holder: String, for duration: Duration) async throws -> Bool
    func releaseLease(holder: String) async throws

    /// Whether any message is due at `now`, or in flight by a dispatcher other than `instance`.
    func hasWork(now: Int64, instance: String) async throws -> Bool

    /// In one transaction: messages another dispatcher left in flight become due again (marked
    /// uncertain); up to `limit` due ones are marked in flight by `instance` and returned.
    /// Nothing when `holder` does not hold the lease.
    func claimDue(now: Int64, limit: Int, holder: String, instance: String) async throws -> [MailDelivery]

    /// Records a send's outcome, if the message is still in flight by `instance`.
    func record(_ outcome: MailRecordedOutcome, id: String, instance: String, now: Int64) async throws

    /// Messages not finished (pending or in flight).
    func queueDepth() async throws -> Int

    /// Deletes finished messages updated before `cutoff`, and resets that expired before it.
    func prune(before cutoff: Int64) async throws

    /// The outbox rows, oldest first, at most `limit`.
    func statuses(limit: Int) async throws -> [MailStatus]
}
