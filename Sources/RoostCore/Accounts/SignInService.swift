import RoostJSON
import RoostStore

/// Sign in with Apple and Google by ID token: the token's signature (through the verifier),
/// issuer, audience, lifetime and nonce are checked, its nonce is spent, and the account is
/// found by the provider's subject, linked by a verified email when the app allows, or created.
public struct SignInService: Sendable {
    /// The longest ID token read; providers' are about 1 KiB.
    public static let maximumTokenBytes = 8 * 1024
    /// The raw nonce's bounds, in bytes of UTF-8: enough randomness, nothing that fills a row.
    public static let nonceBytes = 16...256

    let accounts: AccountService
    let identities: any IdentityStore
    let verifier: (any IdentityTokenVerifier)?
    let settings: SignInSettings

    public init(
        accounts: AccountService, identities: any IdentityStore, verifier: (any IdentityTokenVerifier)?,
        settings: SignInSettings
    ) {
        self.accounts = accounts
        self.identities = identities
        self.verifier = verifier
        self.settings = settings
    }

    /// The provider's client ids in force: the app definition's, else the configured ones.
    func clientIds(_ provider: SignInProvider) -> [String] {
        accounts.definitions.definition.settings.signIn?.clientIds[provider] ?? settings[provider].clientIds
    }

    var linksVerifiedEmails: Bool {
        accounts.definitions.definition.settings.signIn?.linkVerifiedEmails ?? settings.linkVerifiedEmails
    }

    /// The provider named in a path, if it is configured.
    public func configuredProvider(_ name: String) throws -> SignInProvider {
        guard let provider = SignInProvider(rawValue: name), verifier != nil, !clientIds(provider).isEmpty
        else {
            throw RoostError.providerNotConfigured(name)
        }
        return provider
    }

    /// Logs in (or creates) the account of a verified ID token; `created` says which.
    public func signIn(
        provider: SignInProvider, idToken: String, nonce: String, device: DeviceInfo, address: String?,
        client: String? = nil, refresh: Bool
    ) async throws -> (user: StoredObject, token: IssuedToken, created: Bool) {
        let checked = try await spend(provider: provider, idToken: idToken, nonce: nonce)
        let now = accounts.clock.nowMilliseconds()
        let (userGuid, created) = try await account(
            for: checked, provider: provider, now: now, client: client)
        guard let user = try await accounts.objects.object(in: AccountService.userCollection, guid: userGuid),
            AccountService.isActive(user)
        else { throw RoostError.invalidCredentials }
        let token = try await accounts.issueToken(
            for: userGuid, device: device, address: address, refresh: refresh)
        return (user, token, created)
    }

    /// Links the identity of a verified ID token to the caller's account.
    public func link(provider: SignInProvider, idToken: String, nonce: String, to principal: Principal)
        async throws
        -> IdentityRecord
    {
        let checked = try await spend(provider: provider, idToken: idToken, nonce: nonce)
        let identity = IdentityRecord(
            userGuid: principal.userGuid, provider: provider.rawValue, subject: checked.subject,
            email: checked.verifiedEmail, createdAt: accounts.clock.nowMilliseconds())
        do {
            try await identities.link(identity)
        } catch is IdentityConflict {
            throw RoostError.identityTaken
        }
        return identity
    }

    /// The checked claims of a token whose nonce this call has spent.
    func spend(provider: SignInProvider, idToken: String, nonce: String) async throws -> CheckedClaims {
        let clientIds = clientIds(provider)
        guard let verifier, !clientIds.isEmpty else {
            throw RoostError.providerNotConfigured(provider.rawValue)
        }
        guard Self.nonceBytes.contains(nonce.utf8.count) else {
            throw RoostError.invalidField(
                "nonce",
                "nonce is the raw nonce the app made: \(Self.nonceBytes.lowerBound) to \(Self.nonceBytes.upperBound) bytes."
            )
        }
        guard !idToken.isEmpty, idToken.utf8.count <= Self.maximumTokenBytes else {
            throw RoostError.invalidIdentityToken
        }
        let claims = try await verifier.verifiedClaims(of: idToken, provider: provider)
        let checked = try check(claims, provider: provider, clientIds: clientIds, nonce: nonce)
        let now = accounts.clock.nowMilliseconds()
        // The token is spent before anything is done with it: a copy presented later, here or at
        // another instance, finds its nonce taken.
        let spent = Sodium.sha256(
            Array("\(provider.rawValue)\u{0}\(checked.subject)\u{0}\(checked.nonce)".utf8))
        guard try await identities.claimNonce(spent, expiresAt: checked.expiresAt, now: now) else {
            throw RoostError.nonceReplayed
        }
        return checked
    }

    struct CheckedClaims {
        var subject: String
        var nonce: String
        /// Milliseconds: until when the token (with the skew) could be presented.
        var expiresAt: Int64
        /// Set only when the provider says it is verified.
        var verifiedEmail: String?
    }

    /// Issuer, audience, lifetime, subject and nonce, in the order that names the first problem.
    func check(_ claims: JSONObject, provider: SignInProvider, clientIds: [String], nonce: String) throws
        -> CheckedClaims
    {
        let issuer = settings[provider].issuer
        guard let iss = claims["iss"]?.stringValue,
            iss == issuer || (provider == .google && "https://" + iss == issuer)
        else { throw RoostError.invalidIdentityToken }
        let audiences: [String] =
            switch claims["aud"] {
            case .string(let one): [one]
            case .array(let many): many.compactMap(\.stringValue)
            default: []
            }
        guard audiences.contains(where: clientIds.contains) else { throw RoostError.wrongAudience }
        guard let exp = claims["exp"]?.integerValue, let iat = claims["iat"]?.integerValue else {
            throw RoostError.invalidIdentityToken
        }
        let now = accounts.clock.nowMilliseconds() / 1000
        let skew = Int64(settings.clockSkew)
        guard now < exp + skew, iat <= now + skew else { throw RoostError.identityTokenExpired }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw RoostError.invalidIdentityToken
        }
        guard let claimed = claims["nonce"]?.stringValue, claimed == provider.expectedNonceClaim(raw: nonce)
        else {
            throw RoostError.nonceMismatch
        }
        // Apple sends email_verified as a string ("true") in some tokens, a boolean in others.
        let verified = claims["email_verified"] == .bool(true) || claims["email_verified"] == .string("true")
        let email = claims["email"]?.stringValue.flatMap {
            $0.utf8.count <= 254 && $0.contains("@") ? $0 : nil
        }
        return CheckedClaims(
            subject: subject, nonce: claimed, expiresAt: (exp + skew) * 1000,
            verifiedEmail: verified ? email : nil)
    }

    /// The account of the identity: found by subject, linked by verified email when allowed, or new.
    /// `client` is whom the registration throttle counts a new account against.
    func account(for claims: CheckedClaims, provider: SignInProvider, now: Int64, client: String?)
        async throws
        -> (userGuid: String, created: Bool)
    {
        if let found = try await identities.identity(provider: provider.rawValue, subject: claims.subject) {
            return (found.userGuid, false)
        }
        let identity = { (userGuid: String) in
            IdentityRecord(
                userGuid: userGuid, provider: provider.rawValue, subject: claims.subject,
                email: claims.verifiedEmail,
                createdAt: now)
        }
        if linksVerifiedEmails, let email = claims.verifiedEmail,
            let account = try await accounts.accounts.account(identifiedBy: email.lowercased()),
            account.emailKey == email.lowercased()
        {
            do {
                // The account's password and sessions end: whoever registered the address first
                // may not own it (Roost does not verify addresses), and must not keep a way in.
                try await identities.linkClaimingAccount(identity(account.userGuid))
                return (account.userGuid, false)
            } catch is IdentityConflict {
                // The account has another identity of this provider: it is not this one's.
                throw RoostError.identityTaken
            }
        }
        guard accounts.definitions.definition.settings.registration == .open else {
            throw RoostError(
                status: 403, code: .registrationClosed,
                message: "This app does not take new registrations; ask an administrator for an account.")
        }
        // A new account is a registration: counted per client address as /ff/register counts.
        if let client, let wait = try await accounts.throttle.admitRegistration(client: client) {
            throw RoostError.tooManyRegistrations(retryAfter: wait)
        }
        // Without linking, an email another account has stays that account's: the new account
        // goes without one rather than telling the caller the address is taken.
        var email = claims.verifiedEmail
        for _ in 0..<3 {
            let guid = accounts.guids.makeGuid()
            let userName = "\(provider.rawValue)-\(Sodium.hex(Sodium.randomBytes(6)))"
            var fields = JSONObject(uniqueMembers: [("userName", .string(userName))])
            if let email { fields["email"] = .string(email) }
            fields["active"] = .bool(true)
            let user = ObjectService.makeObject(
                collection: AccountService.userCollection, guid: guid, fields: fields, createdBy: guid,
                createdAt: now, updatedBy: guid, updatedAt: now, version: 1)
            // No password: the empty hash matches none, and password logins treat it as unknown.
            let account = AccountRecord(
                userGuid: guid, userNameKey: userName, emailKey: email?.lowercased(), passwordHash: "")
            do {
                try await identities.createAccount(account, user: user, identity: identity(guid))
                return (guid, true)
            } catch AccountConflict.email {
                email = nil
            } catch AccountConflict.userName {
                continue
            } catch IdentityConflict.subjectTaken {
                // Another token of the same user created the account first.
                if let found = try await identities.identity(
                    provider: provider.rawValue, subject: claims.subject)
                {
                    return (found.userGuid, false)
                }
            }
        }
        throw RoostError.invalidIdentityToken
    }

    /// The identities of a user: the caller's own, or anyone's for an administrator.
    public func identities(ofUser userGuid: String, by principal: Principal) async throws -> [IdentityRecord]
    {
        if userGuid != principal.userGuid { try AccountService.requireAdmin(principal) }
        return try await identities.identities(userGuid: userGuid)
    }

    /// Unlinks a user's identity of `provider`, unless it is the account's last way to log in.
    public func unlink(provider: String, ofUser userGuid: String, by principal: Principal) async throws {
        if userGuid != principal.userGuid { try AccountService.requireAdmin(principal) }
        switch try await identities.unlink(userGuid: userGuid, provider: provider) {
        case .removed: return
        case .notFound: throw RoostError.identityNotFound(provider)
        case .lastSignInMethod: throw RoostError.lastSignInMethod
        }
    }
}
