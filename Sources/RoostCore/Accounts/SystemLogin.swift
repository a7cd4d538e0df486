/// FatFractal's `system` user: scripts and data imports call the API as `system` with HTTP Basic
/// (`curl -u system:… …/ff/ext/simpleImport`). Roost has no such account: the operator gives the
/// server the system password (`roost serve --system-password-file`), and a request that sends it
/// is ``Principal/system``, an administrator whom no rule stops. Without that file `system` never
/// logs in, and the refusal is the same `invalid_credentials` either way.
public struct SystemLogin: Sendable {
    /// The user name FatFractal's clients send.
    public static let userName = "system"
    /// The shortest system password accepted, in UTF-8 bytes: the password opens everything.
    public static let minimumPasswordBytes = 16
    /// The longest one, as for users.
    public static let maximumPasswordBytes = 1024

    /// The password's hash; nil when the system user may not log in.
    let passwordHash: String?
    let accounts: AccountService

    /// `password` from the operator's file, or nil; throws for one that is too short or too long.
    public init(password: String?, accounts: AccountService) throws {
        self.accounts = accounts
        guard let password else {
            passwordHash = nil
            return
        }
        guard (Self.minimumPasswordBytes...Self.maximumPasswordBytes).contains(password.utf8.count) else {
            throw SystemPasswordError(
                message:
                    "the system password must be \(Self.minimumPasswordBytes) to \(Self.maximumPasswordBytes) bytes long (openssl rand -base64 24 makes a good one)"
            )
        }
        passwordHash = try accounts.hasher.hashBlocking(password)
    }

    /// Whether the system user can log in at all.
    public var isEnabled: Bool { passwordHash != nil }

    /// ``Principal/system`` for the right password. Throttled as a user's login is (one count for
    /// `system`, one for the address); a wrong password, or none configured, is
    /// `invalid_credentials`, after the same hashing work.
    public func principal(password: String, client: String) async throws -> Principal {
        let key = "system:" + Self.userName
        if let wait = try await accounts.throttle.retryAfter(account: key, address: client) {
            throw RoostError.tooManyAttempts(retryAfter: wait)
        }
        let valid = try await accounts.hasher.verify(
            String(password.prefix(Self.maximumPasswordBytes)), against: passwordHash ?? accounts.decoyHash)
        guard valid, passwordHash != nil else {
            try await accounts.throttle.recordFailure(account: key, address: client)
            // No Basic challenge: a browser that is never asked keeps no system password.
            throw RoostError.invalidSystemCredentials
        }
        await accounts.throttle.recordSuccess(account: key)
        return .system
    }
}

extension RoostError {
    /// A wrong system password (or none configured): login's refusal, challenged as Bearer, not
    /// Basic, so that browsers never prompt for the system password nor keep it.
    public static let invalidSystemCredentials = RoostError(
        status: 401, code: .invalidCredentials, message: RoostError.invalidBasicCredentials.message,
        headers: [ErrorHeader(name: "WWW-Authenticate", value: "Bearer realm=\"roost\"")])

    /// The system password sent by a browser (an `Origin` or `Sec-Fetch-Site` header).
    public static let systemFromBrowser = RoostError(
        status: 403, code: .forbidden,
        message:
            "The system user is for tools such as curl -u system:… and data imports, not browsers: a request with Origin or Sec-Fetch-Site is refused. Log in as an administrator instead."
    )
}

/// A system password the server cannot take.
public struct SystemPasswordError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension Principal {
    /// FatFractal's system user: an administrator (no rule applies) whose writes say
    /// `createdBy: "system"`; what system scripts run as, and what the system password logs in as.
    public static let system = Principal(
        userGuid: SystemLogin.userName, tokenId: "script-system", isAdmin: true)
}
