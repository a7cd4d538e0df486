/// A refresh token as stored: the SHA-256 of its secret, never the secret. Its family is the
/// session (the `tokens` row) it belongs to: the row lives as long as the family, so every path
/// that ends a session (logout, revocation, a new login under the session policy, a password
/// change, deactivation) ends its refresh tokens with it.
public struct RefreshTokenRecord: Sendable, Equatable {
    public var secretHash: [UInt8]
    /// The session's token id: the family.
    public var tokenId: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// When it was exchanged for a new pair; nil while it is the family's live one.
    public var rotatedAt: Int64?

    public init(
        secretHash: [UInt8], tokenId: String, createdAt: Int64, expiresAt: Int64, rotatedAt: Int64? = nil
    ) {
        self.secretHash = secretHash
        self.tokenId = tokenId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.rotatedAt = rotatedAt
    }
}

/// A refresh token's family as a lookup finds it, before the exchange.
public struct RefreshLookup: Sendable, Equatable {
    public var refresh: RefreshTokenRecord
    /// The session's owner.
    public var userGuid: String

    public init(refresh: RefreshTokenRecord, userGuid: String) {
        self.refresh = refresh
        self.userGuid = userGuid
    }
}

/// The new access token and refresh token of an exchange, as hashes; the secrets stay with the
/// caller.
public struct RefreshRotation: Sendable, Equatable {
    public var presentedHash: [UInt8]
    public var userGuid: String
    public var accessHash: [UInt8]
    public var accessExpiresAt: Int64
    public var next: RefreshTokenRecord
    public var now: Int64
    /// The most exchanged tokens a family keeps for reuse detection (besides expiry).
    public var keptRotated: Int

    public init(
        presentedHash: [UInt8], userGuid: String, accessHash: [UInt8], accessExpiresAt: Int64,
        next: RefreshTokenRecord, now: Int64, keptRotated: Int
    ) {
        self.presentedHash = presentedHash
        self.userGuid = userGuid
        self.accessHash = accessHash
        self.accessExpiresAt = accessExpiresAt
        self.next = next
        self.now = now
        self.keptRotated = keptRotated
    }
}

/// What an exchange did.
public enum RefreshOutcome: Sendable, Equatable {
    /// The session now holds the new access token; the presented refresh token is dead.
    case rotated(TokenRecord)
    /// No such refresh token (never issued, or its family has ended).
    case unknown
    /// It had been exchanged already: its family (this session) was revoked.
    case reused(tokenId: String)
    /// It had expired: its family was ended.
    case expired
}

/// Refresh tokens beside the sessions (``AccountStore``'s tokens) they belong to.
public protocol RefreshStore: Sendable {
    /// Stores a session and its first refresh token in one transaction, first deleting the
    /// tokens `revocation` names (and so their families), and records the device.
    func issue(
        _ token: TokenRecord, refresh: RefreshTokenRecord, revoking revocation: TokenRevocation,
        manufacturerId: String?
    ) async throws

    /// The refresh token whose secret hashes to `secretHash`, live or exchanged.
    func lookup(secretHash: [UInt8]) async throws -> RefreshLookup?

    /// Exchanges a refresh token, in one transaction, for the new pair `rotation` describes. A
    /// token exchanged already revokes its family; two exchanges of one token: one rotates.
    func rotate(_ rotation: RefreshRotation) async throws -> RefreshOutcome

    /// Ends the family of a refresh token (live or exchanged); the session's id if there was one.
    func revokeFamily(secretHash: [UInt8]) async throws -> String?
}
