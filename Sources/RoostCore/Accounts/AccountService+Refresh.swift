import RoostStore

/// When logins get a short-lived access token with a rotating refresh token (seed 004: "use
/// OAuth with a refresh token") instead of one long-lived token.
public enum RefreshMode: String, Sendable, CaseIterable {
    /// Never: every login gets one token, renewed by use.
    case off
    /// When the login asks (`"refresh": true`).
    case optional
    /// Every login.
    case always
}

extension AccountService {
    /// Exchanged refresh tokens a session keeps (besides expiry) to recognise their reuse.
    static let keptRotatedRefreshTokens = 100

    /// The refresh mode in force: the app definition's, else the configured one; off without a
    /// refresh store.
    var refreshMode: RefreshMode {
        guard refreshTokens != nil else { return .off }
        return definitions.definition.settings.refreshTokens ?? configuredRefreshMode
    }

    /// Whether a login that `asked` (or not) gets a session that refreshes.
    func refreshes(asked: Bool) -> Bool {
        switch refreshMode {
        case .off: false
        case .optional: asked
        case .always: true
        }
    }

    /// Milliseconds an access token lives: the app definition's, else the configured one, never
    /// longer than its refresh token.
    func accessTokenLifetime() -> Int64 {
        let lifetime =
            definitions.definition.settings.accessTokenLifetime.map { Int64($0) * 1000 }
            ?? configuredAccessTokenLifetime
        return min(lifetime, tokenLifetime())
    }

    static func newSecret() -> String { Sodium.base64URL(Sodium.randomBytes(32)) }

    /// Exchanges a refresh token for a new access token and refresh token; the presented one
    /// dies. A refresh token exchanged before ends its session (theft detection, as the OAuth 2.0
    /// Security BCP describes): neither the thief nor the owner can refresh it again. Every
    /// failure is the same `invalid_refresh_token`.
    public func refresh(secret: String) async throws -> IssuedToken {
        guard let store = refreshTokens, !secret.isEmpty, secret.utf8.count <= 256 else {
            throw RoostError.invalidRefreshToken
        }
        let presented = Sodium.sha256(Array(secret.utf8))
        // Unknown tokens cost a point read, never a write.
        guard let found = try await store.lookup(secretHash: presented),
            let facts = try await objects.accessFacts(userGuid: found.userGuid), facts.isActive
        else { throw RoostError.invalidRefreshToken }
        let now = clock.nowMilliseconds()
        let access = Self.newSecret()
        let next = Self.newSecret()
        let rotation = RefreshRotation(
            presentedHash: presented, userGuid: found.userGuid, accessHash: Sodium.sha256(Array(access.utf8)),
            accessExpiresAt: now + accessTokenLifetime(),
            next: RefreshTokenRecord(
                secretHash: Sodium.sha256(Array(next.utf8)), tokenId: found.refresh.tokenId, createdAt: now,
                expiresAt: now + tokenLifetime()),
            now: now, keptRotated: Self.keptRotatedRefreshTokens)
        let outcome: RefreshOutcome
        do {
            outcome = try await store.rotate(rotation)
        } catch StoreError.versionChanged {
            throw RoostError.invalidRefreshToken
        }
        guard case .rotated(let record) = outcome else { throw RoostError.invalidRefreshToken }
        return IssuedToken(record: record, secret: access, refreshSecret: next)
    }

    /// Ends the session of a refresh token (live or exchanged): a logout whose access token has
    /// expired. False when no session had it.
    public func logout(refreshSecret secret: String) async throws -> Bool {
        guard let store = refreshTokens, !secret.isEmpty, secret.utf8.count <= 256 else { return false }
        return try await store.revokeFamily(secretHash: Sodium.sha256(Array(secret.utf8))) != nil
    }
}

extension RoostError {
    /// The access token of a session that refreshes has expired: exchange the refresh token.
    public static let tokenExpired = RoostError(
        status: 401, code: .tokenExpired,
        message:
            "The access token has expired; exchange the refresh token at POST /ff/refresh for a new one.",
        headers: [
            ErrorHeader(
                name: "WWW-Authenticate",
                value:
                    "Bearer realm=\"roost\", error=\"invalid_token\", error_description=\"The access token expired\""
            )
        ])

    /// Every failed exchange: unknown, expired, revoked or already used (whose session it ended).
    public static let invalidRefreshToken = RoostError(
        status: 401, code: .invalidRefreshToken,
        message: "The refresh token is unknown, expired, revoked or already used; log in again.",
        headers: [
            ErrorHeader(name: "WWW-Authenticate", value: "Bearer realm=\"roost\", error=\"invalid_token\"")
        ])
}
