/// A way into an account besides its password: the subject a sign-in provider (Apple, Google)
/// names the user by. Accounts are found by `(provider, subject)`, never by email alone.
public struct IdentityRecord: Sendable, Equatable {
    public var userGuid: String
    /// `apple` or `google`.
    public var provider: String
    /// The provider's `sub`: stable for the user and the app.
    public var subject: String
    /// The email the provider gave when the identity was linked, if any.
    public var email: String?
    /// Milliseconds since 1970.
    public var createdAt: Int64

    public init(userGuid: String, provider: String, subject: String, email: String?, createdAt: Int64) {
        self.userGuid = userGuid
        self.provider = provider
        self.subject = subject
        self.email = email
        self.createdAt = createdAt
    }
}

/// Why an identity could not be linked.
public enum IdentityConflict: Error, Sendable, Equatable {
    /// The provider's subject is another account's already.
    case subjectTaken
    /// The account has an identity of this provider already.
    case providerLinked
}

/// What an unlink did.
public enum IdentityRemoval: Sendable, Equatable {
    case removed
    /// The account has no identity of that provider.
    case notFound
    /// It is the account's last way to log in (no password, no other identity): kept.
    case lastSignInMethod
}

/// Identities, and the nonces of identity tokens already used (so a token is taken once, by
/// every instance sharing the database).
public protocol IdentityStore: Sendable {
    /// The identity a provider's subject is linked as.
    func identity(provider: String, subject: String) async throws -> IdentityRecord?
    /// A user's identities, oldest first.
    func identities(userGuid: String) async throws -> [IdentityRecord]
    /// Links an identity to an existing account; throws ``IdentityConflict``.
    func link(_ identity: IdentityRecord) async throws
    /// Links an identity found by its verified e-mail address, and in the same transaction
    /// clears the account's password and ends its sessions: Roost does not verify addresses, so
    /// whoever registered the address first (perhaps not its owner) loses the way in they made.
    func linkClaimingAccount(_ identity: IdentityRecord) async throws
    /// Creates an account, its user object and its identity in one transaction; throws
    /// `AccountConflict` or ``IdentityConflict``.
    func createAccount(_ account: AccountRecord, user: StoredObject, identity: IdentityRecord) async throws
    /// Removes a user's identity of `provider` unless nothing else would log the account in.
    func unlink(userGuid: String, provider: String) async throws -> IdentityRemoval
    /// Records a token's nonce as used until `expiresAt`; false when it was used already.
    /// Forgets nonces whose tokens expired before `now`.
    func claimNonce(_ nonceHash: [UInt8], expiresAt: Int64, now: Int64) async throws -> Bool
}
