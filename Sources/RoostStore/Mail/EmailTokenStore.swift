/// What an e-mail token confirms.
public enum EmailTokenPurpose: String, Sendable, Equatable {
    /// That the account's address reaches its owner.
    case verify
    /// A change of the account's address to the token's.
    case change
}

/// A live e-mail token, found by its hash.
public struct EmailTokenRecord: Sendable, Equatable {
    public var userGuid: String
    public var purpose: EmailTokenPurpose
    /// The address the token confirms, as the user wrote it (for a change: the new one).
    public var email: String
    public var expiresAt: Int64

    public init(userGuid: String, purpose: EmailTokenPurpose, email: String, expiresAt: Int64) {
        self.userGuid = userGuid
        self.purpose = purpose
        self.email = email
        self.expiresAt = expiresAt
    }
}

/// What confirming a token writes: the account's keys, and its `FFUser` object (built before the
/// write, so that the writer parses no JSON).
public struct EmailConfirmation: Sendable {
    public var tokenHash: String
    public var purpose: EmailTokenPurpose
    /// The account's email key after the change (lowercased).
    public var emailKey: String
    /// The account's user-name key after it, when the user name is the address.
    public var userNameKey: String?
    /// The user object with its new fields, its version one past `expectedVersion`.
    public var user: StoredObject
    public var expectedVersion: Int64
    public var now: Int64

    public init(
        tokenHash: String, purpose: EmailTokenPurpose, emailKey: String, userNameKey: String?,
        user: StoredObject, expectedVersion: Int64, now: Int64
    ) {
        self.tokenHash = tokenHash
        self.purpose = purpose
        self.emailKey = emailKey
        self.userNameKey = userNameKey
        self.user = user
        self.expectedVersion = expectedVersion
        self.now = now
    }
}

/// E-mail verification and change tokens (only their SHA-256 is stored), beside the accounts
/// they change and the outbox their mail goes to.
public protocol EmailTokenStore: Sendable {
    /// In one transaction: when an account whose address is not verified has `emailKey`, stores
    /// a verification token for it and queues `mail`; otherwise writes nothing. Returns whether
    /// it was queued.
    func requestVerification(
        emailKey: String, tokenHash: String, expiresAt: Int64, mail: OutboxMail, now: Int64
    )
        async throws -> Bool

    /// In one transaction: stores a change token to `email` for the user and queues `mails`.
    func requestChange(
        userGuid: String, email: String, tokenHash: String, expiresAt: Int64, mails: [OutboxMail], now: Int64
    ) async throws

    /// The token whose hash is `tokenHash`, expired or not.
    func emailToken(tokenHash: String) async throws -> EmailTokenRecord?

    /// In one transaction, if the token is still live: deletes it with the user's other tokens of
    /// its purpose (a change deletes all of them, and the user's password resets), sets the
    /// account's keys and verification time, and writes the user object. Returns false when the
    /// token is unknown, used or expired; throws ``AccountConflict/email`` when another account
    /// has the address (as email or user name), ``StoreError/versionChanged`` when the object moved.
    func confirm(_ confirmation: EmailConfirmation) async throws -> Bool
}
