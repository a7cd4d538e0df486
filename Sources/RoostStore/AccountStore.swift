/// A user's credentials, kept apart from the readable `FFUser` object.
public struct AccountRecord: Sendable, Equatable {
    public var userGuid: String
    /// The user name, lowercased: names are unique without regard to case.
    public var userNameKey: String
    /// The email, lowercased, if the user gave one.
    public var emailKey: String?
    /// An Argon2id hash in libsodium's string format.
    public var passwordHash: String
    /// When the address was verified (milliseconds); nil while it is not.
    public var emailVerifiedAt: Int64?

    public init(
        userGuid: String, userNameKey: String, emailKey: String?, passwordHash: String,
        emailVerifiedAt: Int64? = nil
    ) {
        self.emailVerifiedAt = emailVerifiedAt
        self.userGuid = userGuid
        self.userNameKey = userNameKey
        self.emailKey = emailKey
        self.passwordHash = passwordHash
    }
}

/// A session token as stored: only the SHA-256 of the secret, never the secret.
public struct TokenRecord: Sendable, Equatable {
    public var id: String
    public var userGuid: String
    public var secretHash: [UInt8]
    public var deviceId: String
    public var deviceType: String?
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// When the expiry last moved forward; renewal happens at most once an hour.
    public var renewedAt: Int64
    /// The client address that logged in (behind trusted proxies, the forwarded one); nil for
    /// sessions older than the record of it.
    public var clientAddress: String?
    /// Set on a session that refreshes: its live refresh token's expiry. Its `expiresAt` is then
    /// the short-lived access token's, which use never extends.
    public var refreshExpiresAt: Int64?

    public init(
        id: String, userGuid: String, secretHash: [UInt8], deviceId: String, deviceType: String?,
        createdAt: Int64,
        expiresAt: Int64, renewedAt: Int64, clientAddress: String? = nil, refreshExpiresAt: Int64? = nil
    ) {
        self.clientAddress = clientAddress
        self.refreshExpiresAt = refreshExpiresAt
        self.id = id
        self.userGuid = userGuid
        self.secretHash = secretHash
        self.deviceId = deviceId
        self.deviceType = deviceType
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.renewedAt = renewedAt
    }
}

extension TokenRecord {
    /// Whether the session lives at `now`: its token, or else its refresh token, has not expired.
    public func isLive(at now: Int64) -> Bool { expiresAt > now || (refreshExpiresAt ?? 0) > now }
}

/// Which of a user's tokens a new login replaces.
public enum TokenRevocation: Sendable, Equatable {
    /// Keep every other token.
    case none
    /// Replace the token of the same device.
    case sameDevice
    /// Replace every token of the user.
    case allDevices
    /// Keep only this many of the same device's tokens, the newest, besides the new one.
    case sameDeviceBeyond(Int)
}

/// Which tokens a password change ends.
public enum TokenCleanup: Sendable, Equatable {
    /// None: a rehash at login changes nothing the user sees.
    case none
    /// All but the session that made the change.
    case allExcept(tokenId: String)
    /// All: an administrator reset the password.
    case all
}

/// Why an account could not be created.
public enum AccountConflict: Error, Sendable, Equatable {
    case userName
    case email
}

/// Accounts, tokens and devices. Implemented next to ``ObjectStore`` by each driver, because
/// creating a user writes both in one transaction.
public protocol AccountStore: Sendable {
    /// Stores the account and its `FFUser` object together; throws ``AccountConflict``.
    func createAccount(_ account: AccountRecord, user: StoredObject) async throws

    /// The account whose user name or email (lowercased) is `key`.
    func account(identifiedBy key: String) async throws -> AccountRecord?

    /// The account of a user.
    func account(userGuid: String) async throws -> AccountRecord?

    /// Replaces a password hash and deletes the tokens `revoking` names.
    func updatePasswordHash(userGuid: String, hash: String, revoking: TokenCleanup)
        async throws

    /// Stores a token, first deleting the tokens `revocation` names, and records the device.
    func issue(_ token: TokenRecord, revoking revocation: TokenRevocation, manufacturerId: String?)
        async throws

    /// The token whose secret hashes to `secretHash`, if it exists (expired ones included).
    func token(secretHash: [UInt8]) async throws -> TokenRecord?

    /// The token with this id.
    func token(id: String) async throws -> TokenRecord?

    /// A user's tokens, newest first.
    func tokens(userGuid: String) async throws -> [TokenRecord]

    /// Deletes a token; true if it existed.
    @discardableResult
    func deleteToken(id: String) async throws -> Bool

    /// Deletes an account with its tokens, devices and `FFUser` object; false if there was none.
    func deleteAccount(userGuid: String) async throws -> Bool

    /// Moves a token's expiry forward.
    func renewToken(id: String, expiresAt: Int64, renewedAt: Int64) async throws

    /// Creates the group objects that do not exist (a retired guid included: the app declares it).
    /// One that exists is replaced (its members and access list gone) when `isSquatted` says so of
    /// who created it (the domain's rule), and kept otherwise; returns the guids replaced. The
    /// check and the replacement share one transaction.
    func ensureGroups(
        _ groups: [StoredObject], replacingWhen isSquatted: @escaping @Sendable (GroupClaim) -> Bool
    )
        async throws -> [String]
}

/// Who created a group object that already exists when the app declares its guid.
public struct GroupClaim: Sendable, Equatable {
    /// Nil for the system's.
    public var createdBy: String?
    /// Whether that creator is an administrator now.
    public var creatorIsAdmin: Bool

    public init(createdBy: String?, creatorIsAdmin: Bool) {
        self.createdBy = createdBy
        self.creatorIsAdmin = creatorIsAdmin
    }
}
