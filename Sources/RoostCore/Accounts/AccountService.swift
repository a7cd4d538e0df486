import Foundation
import RoostJSON
import RoostStore

/// How many live tokens a user may hold.
public enum SessionPolicy: String, Sendable, CaseIterable {
    /// One token per device: a new login on a device replaces that device's token.
    case perDevice
    /// One token in all: a login revokes the user's tokens on every other device.
    case singleDevice
    /// Every login adds a token.
    case unlimited
}

/// Who is making a request.
public struct Principal: Sendable, Equatable {
    public let userGuid: String
    public let tokenId: String
    /// `admin: true` on the user: rules do not apply.
    public var isAdmin = false
    /// Guids of the `FFUserGroup`s that list the user.
    public var groups: [String] = []
    /// The user is an administrator but the request came from outside `--admin-allow`: the
    /// caller acts as an ordinary user, and a re-read of the user's flags keeps it so.
    public var isAdminWithheld = false

    public init(userGuid: String, tokenId: String, isAdmin: Bool = false, groups: [String] = []) {
        self.userGuid = userGuid
        self.tokenId = tokenId
        self.isAdmin = isAdmin
        self.groups = groups
    }

    /// The principal as an ordinary user: for an administrator's token used from an address
    /// outside `--admin-allow`.
    public func withholdingAdmin() -> Principal {
        guard isAdmin else { return self }
        var ordinary = self
        ordinary.isAdmin = false
        ordinary.isAdminWithheld = true
        return ordinary
    }
}

/// The device a login comes from; every field is optional.
public struct DeviceInfo: Sendable, Equatable {
    public var id: String?
    public var type: String?
    public var manufacturerId: String?

    public init(id: String? = nil, type: String? = nil, manufacturerId: String? = nil) {
        self.id = id
        self.type = type
        self.manufacturerId = manufacturerId
    }
}

/// A token just issued: the record, and the secret, which is shown this once and never stored;
/// with a refresh token's secret when the session refreshes.
public struct IssuedToken: Sendable {
    public let record: TokenRecord
    public let secret: String
    public var refreshSecret: String? = nil
}

/// Accounts and sessions: registration, login, tokens, logout, password changes.
public struct AccountService: Sendable {
    public static let userCollection = "FFUser"
    /// Body fields that configure the login and are not stored on the user.
    static let loginFields = ["password", "deviceId", "deviceType", "manufacturerId", "refresh"]
    /// User fields only the server (later: admins) may set.
    static let reservedUserFields = ["active", "admin", "emailVerified"]
    static let renewalInterval: Int64 = 60 * 60 * 1000
    /// The device id of logins that name none.
    static let unnamedDevice = "default"
    /// Under `perDevice`, the most sessions a user keeps from logins that name no device; the
    /// oldest ends when another begins.
    public static let maximumUnnamedSessions = 20

    let objects: any ObjectStore
    let accounts: any AccountStore
    let hasher: PasswordHasher
    let clock: any WallClock
    let guids: any GuidGenerator
    let throttle: LoginThrottle
    let configuredPolicy: SessionPolicy
    let configuredTokenLifetime: Int64
    /// The app definition, whose settings override the configured policy and lifetime.
    let definitions: AppDefinitionSource
    /// Verified for unknown users, so a failed login costs the same whether or not the user exists.
    let decoyHash: String
    /// Where sessions that refresh keep their refresh tokens; nil: no session refreshes.
    let refreshTokens: (any RefreshStore)?
    let configuredRefreshMode: RefreshMode
    /// Milliseconds an access token of a session that refreshes lives.
    let configuredAccessTokenLifetime: Int64
    /// `required`: an unverified address gets no session (``EmailVerificationMode``).
    let configuredEmailVerification: EmailVerificationMode

    public init(
        objects: any ObjectStore, accounts: any AccountStore, hasher: PasswordHasher = .standard,
        clock: any WallClock,
        guids: any GuidGenerator, throttle: LoginThrottle, policy: SessionPolicy = .perDevice,
        tokenLifetime: Int64 = 30 * 24 * 60 * 60 * 1000, decoyHash: String,
        definitions: AppDefinitionSource = AppDefinitionSource(), refreshTokens: (any RefreshStore)? = nil,
        refreshMode: RefreshMode = .off, accessTokenLifetime: Int64 = 15 * 60 * 1000,
        emailVerification: EmailVerificationMode = .off
    ) {
        self.configuredEmailVerification = emailVerification
        self.refreshTokens = refreshTokens
        self.configuredRefreshMode = refreshMode
        self.configuredAccessTokenLifetime = accessTokenLifetime
        self.definitions = definitions
        self.objects = objects
        self.accounts = accounts
        self.hasher = hasher
        self.clock = clock
        self.guids = guids
        self.throttle = throttle
        self.configuredPolicy = policy
        self.configuredTokenLifetime = tokenLifetime
        self.decoyHash = decoyHash
    }

    /// The session policy in force: the app definition's, else the configured one.
    var policy: SessionPolicy { definitions.definition.settings.sessionPolicy ?? configuredPolicy }

    /// The e-mail verification in force: the app definition's, else the configured one.
    var emailVerification: EmailVerificationMode {
        definitions.definition.settings.emailVerification ?? configuredEmailVerification
    }

    /// Milliseconds a token lives without use.
    func tokenLifetime() -> Int64 {
        definitions.definition.settings.tokenLifetime.map { Int64($0) * 1000 } ?? configuredTokenLifetime
    }

    /// Creates a user and logs them in. `client` is whom the per-address registration throttle
    /// counts the attempt against (the HTTP layer gives an IPv6 address's /64); nil counts none.
    /// Under `required` e-mail verification the body must hold an email, and no session is
    /// issued (nil token) until the address is verified.
    public func register(
        _ body: JSONObject, device: DeviceInfo, address: String? = nil, client: String? = nil,
        refresh: Bool = false
    ) async throws -> (user: StoredObject, token: IssuedToken?) {
        guard definitions.definition.settings.registration == .open else {
            throw RoostError(
                status: 403, code: .registrationClosed,
                message: "This app does not take new registrations; ask an administrator for an account.")
        }
        if let client, let wait = try await throttle.admitRegistration(client: client) {
            throw RoostError.tooManyRegistrations(retryAfter: wait)
        }
        if emailVerification == .required, body["email"] == nil || body["email"] == .null,
            body["userName"]?.stringValue?.contains("@") != true
        {
            throw RoostError.missingField("email")
        }
        let user = try await createAccount(from: body, reservedFields: [:])
        if emailVerification == .required { return (user, nil) }
        return (
            user, try await issueToken(for: user.guid, device: device, address: address, refresh: refresh)
        )
    }

    /// Validates a registration body and stores the account with its `FFUser` object; names
    /// that pass for staff (``ReservedUserNames/staff``) only when `byOperator`.
    func createAccount(from body: JSONObject, reservedFields: [String: JSONValue], byOperator: Bool = false)
        async throws -> StoredObject
    {
        guard let sentName = body["userName"]?.stringValue else {
            throw body["userName"] == nil
                ? RoostError.missingField("userName")
                : RoostError.invalidField("userName", "userName must be a string.")
        }
        let userName = try Self.normalizedUserName(sentName)
        try ReservedUserNames.check(userName, allowingStaffNames: byOperator)
        let email = try Self.email(in: body, userName: userName)
        guard let password = body["password"]?.stringValue else { throw RoostError.missingField("password") }
        try Self.validate(password: password, userName: userName)

        var fields = body
        for field in Self.loginFields { fields[field] = nil }
        for field in ObjectService.reservedFields + Self.reservedUserFields where fields[field] != nil {
            throw RoostError.readOnlyField(field)
        }
        // A forged blob descriptor would make someone else's blob (known by its digest) this user's.
        for member in fields.members where BlobDescriptor.isDescriptor(member.value) {
            throw RoostError.readOnlyField(member.key)
        }
        fields["userName"] = .string(userName)
        if let email { fields["email"] = .string(email) }
        fields["active"] = .bool(true)
        // The operator vouches for the addresses of the accounts it makes.
        if email != nil, emailVerification != .off { fields["emailVerified"] = .bool(byOperator) }
        for (field, value) in reservedFields { fields[field] = value }

        let guid = guids.makeGuid()
        let now = clock.nowMilliseconds()
        let user = ObjectService.makeObject(
            collection: Self.userCollection, guid: guid, fields: fields, createdBy: guid, createdAt: now,
            updatedBy: guid,
            updatedAt: now, version: 1)
        let account = AccountRecord(
            userGuid: guid, userNameKey: userName.lowercased(), emailKey: email?.lowercased(),
            passwordHash: try await hasher.hash(password),
            emailVerifiedAt: byOperator && email != nil ? now : nil)
        do {
            try await accounts.createAccount(account, user: user)
        } catch AccountConflict.userName {
            throw RoostError.taken("userName")
        } catch AccountConflict.email {
            throw RoostError.taken("email")
        }
        return user
    }

    /// Checks a password and issues a token. Every failure is the same `invalid_credentials`.
    /// `client` is whom the per-address throttle counts the attempt against (the HTTP layer
    /// gives an IPv6 address's /64); `address` is recorded with the token.
    public func login(
        identifier: String, password: String, device: DeviceInfo, address: String, client: String,
        refresh: Bool = false
    ) async throws -> (user: StoredObject, token: IssuedToken) {
        let key = Self.identifierKey(identifier)
        // Accounts made before names were normalised keep the key they were stored with.
        let storedKey = String(identifier.lowercased().prefix(256))
        // No account is named with U+0000 (names refuse control characters, and PostgreSQL could
        // not even look one up): such a login is an unknown account's, decoy hash included.
        let nameable = !identifier.unicodeScalars.contains("\u{0}")
        var account = nameable ? try await accounts.account(identifiedBy: key) : nil
        if nameable, account == nil, storedKey != key {
            account = try await accounts.account(identifiedBy: storedKey)
        }
        // One count per account, whether it is named by userName or by email; an unknown name
        // counts on its own in the same way, so the throttle tells nothing about who exists.
        let throttleKey =
            account.map { "user:" + $0.userGuid } ?? "name:"
            + key.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
        if let wait = try await throttle.retryAfter(account: throttleKey, address: client) {
            throw RoostError.tooManyAttempts(retryAfter: wait)
        }
        // An account made by signing in with a provider has no password (an empty hash): it is
        // verified against the decoy, so that it costs what an unknown name costs.
        let storedHash = account.flatMap { $0.passwordHash.isEmpty ? nil : $0.passwordHash }
        let valid = try await hasher.verify(String(password.prefix(1024)), against: storedHash ?? decoyHash)
        guard valid, storedHash != nil, let account,
            let user = try await objects.object(in: Self.userCollection, guid: account.userGuid),
            Self.isActive(user)
        else {
            try await throttle.recordFailure(account: throttleKey, address: client)
            throw RoostError.invalidCredentials
        }
        await throttle.recordSuccess(account: throttleKey)
        // Told only to whoever knows the password: no one learns from it who has an account.
        if emailVerification == .required, account.emailKey != nil, account.emailVerifiedAt == nil {
            throw RoostError.emailNotVerified
        }
        if hasher.needsRehash(account.passwordHash) {
            try await accounts.updatePasswordHash(
                userGuid: account.userGuid, hash: try await hasher.hash(password), revoking: .none)
        }
        return (
            user,
            try await issueToken(for: account.userGuid, device: device, address: address, refresh: refresh)
        )
    }

    /// The principal a token secret stands for; throws `invalid_token` for anything else.
    public func authenticate(secret: String) async throws -> Principal {
        guard secret.utf8.count <= 256,
            let token = try await accounts.token(secretHash: Sodium.sha256(Array(secret.utf8)))
        else { throw RoostError.invalidToken }
        let now = clock.nowMilliseconds()
        // A session that refreshes says so, for its client to exchange its refresh token.
        guard token.expiresAt > now else {
            throw token.refreshExpiresAt == nil ? RoostError.invalidToken : RoostError.tokenExpired
        }
        // A deactivated user's tokens stop working at once, not when they expire.
        guard let facts = try await objects.accessFacts(userGuid: token.userGuid), facts.isActive else {
            throw RoostError.invalidToken
        }
        // An access token's short life is the point of refreshing: use never extends it.
        if token.refreshExpiresAt == nil, now - token.renewedAt >= Self.renewalInterval {
            do {
                try await accounts.renewToken(id: token.id, expiresAt: now + tokenLifetime(), renewedAt: now)
            } catch let error where StorageFailure.isOutOfSpace(error) {
                // Renewal only extends the token's life, and the next request retries it: on a full
                // disk the token keeps working (reads go on) rather than failing the request.
            }
        }
        return Principal(
            userGuid: token.userGuid, tokenId: token.id, isAdmin: facts.isAdmin, groups: facts.groups)
    }

    /// The user object of a principal.
    public func user(_ principal: Principal) async throws -> StoredObject {
        guard let user = try await objects.object(in: Self.userCollection, guid: principal.userGuid) else {
            throw RoostError.invalidToken
        }
        return user
    }

    /// Revokes the token the principal presented.
    public func logout(_ principal: Principal) async throws {
        try await accounts.deleteToken(id: principal.tokenId)
    }

    /// A live token of the principal's; 404 for anyone else's, expired or revoked ones.
    public func token(id: String, for principal: Principal) async throws -> TokenRecord {
        guard let token = try await accounts.token(id: id), token.userGuid == principal.userGuid,
            token.isLive(at: clock.nowMilliseconds())
        else { throw RoostError.tokenNotFound(id) }
        return token
    }

    /// Revokes one of the principal's tokens.
    public func revokeToken(id: String, for principal: Principal) async throws {
        _ = try await token(id: id, for: principal)
        try await accounts.deleteToken(id: id)
    }

    /// The principal's live tokens, newest first.
    public func tokens(for principal: Principal) async throws -> [TokenRecord] {
        let now = clock.nowMilliseconds()
        return try await accounts.tokens(userGuid: principal.userGuid).filter { $0.isLive(at: now) }
    }

    /// Changes the password after checking the current one, and revokes every other token. Wrong
    /// current passwords count against the account's login throttle, so a stolen token is no way
    /// around it.
    public func changePassword(
        for principal: Principal, current: String, new: String, address: String, client: String
    ) async throws {
        guard let account = try await accounts.account(userGuid: principal.userGuid) else {
            throw RoostError.invalidToken
        }
        try await checkPassword(current, of: account, client: client)
        try Self.validate(password: new, userName: account.userNameKey)
        try await accounts.updatePasswordHash(
            userGuid: principal.userGuid, hash: try await hasher.hash(new),
            revoking: .allExcept(tokenId: principal.tokenId))
    }

    /// Checks a logged-in user's password; wrong ones count against the account's login
    /// throttle, so a stolen token is no way around it.
    func checkPassword(_ password: String, of account: AccountRecord, client: String) async throws {
        let throttleKey = "user:" + account.userGuid
        if let wait = try await throttle.retryAfter(account: throttleKey, address: client) {
            throw RoostError.tooManyAttempts(retryAfter: wait)
        }
        guard try await hasher.verify(String(password.prefix(1024)), against: account.passwordHash) else {
            try await throttle.recordFailure(account: throttleKey, address: client)
            throw RoostError.invalidCredentials
        }
    }

    func issueToken(for userGuid: String, device: DeviceInfo, address: String?, refresh: Bool = false)
        async throws -> IssuedToken
    {
        let secret = Sodium.base64URL(Sodium.randomBytes(32))
        let now = clock.nowMilliseconds()
        let named = device.id.flatMap { $0 == Self.unnamedDevice ? nil : $0 }
        var record = TokenRecord(
            id: guids.makeGuid(), userGuid: userGuid, secretHash: Sodium.sha256(Array(secret.utf8)),
            deviceId: named ?? Self.unnamedDevice, deviceType: device.type, createdAt: now,
            expiresAt: now + tokenLifetime(),
            renewedAt: now, clientAddress: address.map { String($0.prefix(64)) })
        // Logins that name no device (a browser, curl) are not one device: each keeps its own
        // session, up to a bound, rather than ending the previous one.
        let revocation: TokenRevocation =
            switch policy {
            case .perDevice:
                named == nil ? .sameDeviceBeyond(Self.maximumUnnamedSessions - 1) : .sameDevice
            case .singleDevice: .allDevices
            case .unlimited: .none
            }
        if let refreshTokens, refreshes(asked: refresh) {
            let refreshSecret = Self.newSecret()
            record.expiresAt = now + accessTokenLifetime()
            record.refreshExpiresAt = now + tokenLifetime()
            try await refreshTokens.issue(
                record,
                refresh: RefreshTokenRecord(
                    secretHash: Sodium.sha256(Array(refreshSecret.utf8)), tokenId: record.id, createdAt: now,
                    expiresAt: now + tokenLifetime()),
                revoking: revocation, manufacturerId: device.manufacturerId)
            return IssuedToken(record: record, secret: secret, refreshSecret: refreshSecret)
        }
        try await accounts.issue(record, revoking: revocation, manufacturerId: device.manufacturerId)
        return IssuedToken(record: record, secret: secret)
    }

    static func isActive(_ user: StoredObject) -> Bool {
        guard case .object(let document)? = try? JSONParser.parse(user.document) else { return false }
        return document["active"] != .bool(false)
    }

    /// How a login identifier is looked up: NFC, lowercased, bounded.
    static func identifierKey(_ identifier: String) -> String {
        String(identifier.prefix(256).precomposedStringWithCanonicalMapping.lowercased().prefix(256))
    }
}
