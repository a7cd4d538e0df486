import RoostJSON

/// The identity providers whose ID tokens log users in (`POST /ff/login/{provider}`).
public enum SignInProvider: String, Sendable, CaseIterable {
    case apple, google

    /// The `iss` of the provider's ID tokens.
    public var defaultIssuer: String {
        switch self {
        case .apple: "https://appleid.apple.com"
        case .google: "https://accounts.google.com"
        }
    }

    /// Where the provider publishes its signing keys (a JWKS, RFC 7517).
    public var defaultKeysURL: String {
        switch self {
        case .apple: "https://appleid.apple.com/auth/keys"
        case .google: "https://www.googleapis.com/oauth2/v3/certs"
        }
    }

    /// What the token's `nonce` claim holds for the raw nonce the app sent: Apple's apps hand
    /// `ASAuthorizationAppleIDRequest.nonce` the SHA-256 (hex) of their raw nonce, as Apple's and
    /// Firebase's guides do; Google puts the nonce the app gave it unchanged.
    public func expectedNonceClaim(raw: String) -> String {
        switch self {
        case .apple: Sodium.hex(Sodium.sha256(Array(raw.utf8)))
        case .google: raw
        }
    }
}

/// One provider's endpoints and the app's client ids at it.
public struct SignInProviderSettings: Sendable, Equatable {
    /// The `aud` values accepted: bundle ids, services ids, OAuth client ids. None: the provider
    /// is not configured.
    public var clientIds: [String] = []
    public var issuer: String
    /// The JWKS, fetched over HTTPS.
    public var keysURL: String

    public init(provider: SignInProvider) {
        issuer = provider.defaultIssuer
        keysURL = provider.defaultKeysURL
    }
}

/// Sign in with Apple and Google by ID token: `roost serve`'s `--apple-*`, `--google-*` and
/// `--sign-in-*` options; the app definition's `settings.signIn` overrides client ids and linking.
public struct SignInSettings: Sendable {
    public var apple = SignInProviderSettings(provider: .apple)
    public var google = SignInProviderSettings(provider: .google)
    /// Whether a verified email (the provider's `email_verified`) links the identity to the
    /// account that has that email. Off: identities link by the provider's subject only.
    public var linkVerifiedEmails = false
    /// PEM certificates to trust for the providers instead of the system's (the tests' CA).
    public var caFile: String?
    /// Seconds between two fetches of a provider's keys caused by an unknown key id, so tokens
    /// with made-up key ids cannot make the server hammer the provider.
    public var keyRefetchInterval = 60
    /// Seconds a fetched key set is used before it is fetched again.
    public var keyLifetime = 3600
    /// Seconds of clock difference tolerated for `exp` and `iat`.
    public var clockSkew = 60
    /// The whole fetch of a key set, connecting included.
    public var keysTimeoutMilliseconds = 10_000

    public init() {}

    public subscript(provider: SignInProvider) -> SignInProviderSettings {
        get { provider == .apple ? apple : google }
        set {
            if provider == .apple { apple = newValue } else { google = newValue }
        }
    }
}

/// Checks an ID token's signature against its provider's published keys (fetching them off the
/// event loops, cached); RoostPush's `JWKSVerifier` is the one the server uses.
public protocol IdentityTokenVerifier: Sendable {
    /// The token's claims, once its header names a key of `provider`'s and the signature checks
    /// out. Throws `invalid_identity_token`, `unknown_key` or `provider_unavailable`.
    func verifiedClaims(of token: String, provider: SignInProvider) async throws -> JSONObject
    /// Stops fetching; later calls answer `provider_unavailable`.
    func shutdown() async
}

extension RoostError {
    /// Malformed, badly signed, of another issuer, or missing what a login needs.
    public static let invalidIdentityToken = RoostError(
        status: 401, code: .invalidIdentityToken, message: "The identity token is not valid.")
    public static let identityTokenExpired = RoostError(
        status: 401, code: .identityTokenExpired,
        message: "The identity token has expired or is not valid yet; sign in with the provider again.")
    public static let wrongAudience = RoostError(
        status: 401, code: .wrongAudience, message: "The identity token was issued for another app.")
    public static let nonceMismatch = RoostError(
        status: 401, code: .nonceMismatch, message: "The nonce does not match the identity token's.")
    public static let nonceReplayed = RoostError(
        status: 401, code: .nonceReplayed,
        message: "This identity token was used already; sign in with the provider again.")
    public static let unknownKey = RoostError(
        status: 401, code: .unknownKey,
        message: "The identity token is signed with a key the provider does not list.")
    public static let providerUnavailable = RoostError(
        status: 503, code: .providerUnavailable,
        message: "The identity provider's keys cannot be fetched now; try again later.")

    public static func providerNotConfigured(_ name: String) -> RoostError {
        RoostError(
            status: 404, code: .providerNotConfigured,
            message: "Sign-in with '\(name.prefix(32))' is not configured on this server.")
    }

    static func identityNotFound(_ provider: String) -> RoostError {
        RoostError(
            status: 404, code: .identityNotFound, message: "No '\(provider.prefix(32))' identity is linked.")
    }

    static let lastSignInMethod = RoostError(
        status: 409, code: .lastSignInMethod,
        message:
            "This is the account's last way to log in; set a password or link another identity first.")

    static let identityTaken = RoostError(
        status: 409, code: .identityTaken,
        message: "That identity is linked to another account, or this account has one of that provider.")
}
