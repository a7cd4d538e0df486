import Foundation

#if canImport(Security)
    import Security
#endif

/// What the SDK keeps to stay logged in: the token and who it belongs to, never the password.
///
/// A session that refreshes (``RoostConfiguration/requestsRefreshTokens``, or a server that
/// always refreshes) keeps its rotating ``refreshToken`` here instead: its short-lived access
/// token lives in the client's memory only, and ``token`` is empty.
public struct Credential: Codable, Sendable, Equatable {
    /// The bearer token the server issued; empty for a session that refreshes.
    public var token: String
    /// The logged-in user's guid.
    public var userGuid: String
    /// The logged-in user's name, for showing before the first request.
    public var userName: String
    /// The session's current refresh token, exchanged (and replaced) at `POST /ff/refresh`.
    public var refreshToken: String?
    /// The server's id of the session (`tokenId`), the same across refreshes.
    public var sessionId: String?
    /// The device the session is bound to.
    public var deviceId: String?
    /// When the refresh token expires, in milliseconds since 1970 by the server's clock
    /// (informational: the server decides).
    public var refreshExpiresAt: Int64?

    /// A credential from its parts.
    public init(
        token: String, userGuid: String, userName: String, refreshToken: String? = nil,
        sessionId: String? = nil, deviceId: String? = nil, refreshExpiresAt: Int64? = nil
    ) {
        self.token = token
        self.userGuid = userGuid
        self.userName = userName
        self.refreshToken = refreshToken
        self.sessionId = sessionId
        self.deviceId = deviceId
        self.refreshExpiresAt = refreshExpiresAt
    }

    /// Whether the session refreshes: its access token is exchanged, not stored.
    public var refreshes: Bool { refreshToken != nil }
}

/// Where the credential lives between launches.
public protocol CredentialStore: Sendable {
    /// The stored credential, nil when logged out.
    func load() throws -> Credential?
    /// Replaces the stored credential, atomically: a session that refreshes saves each rotated
    /// refresh token, and a crash mid-save must leave the old one or the new one.
    func save(_ credential: Credential) throws
    /// Forgets the credential.
    func clear() throws
}

/// Keeps the credential in memory only: for tests and apps that log in at every launch.
public final class InMemoryCredentialStore: CredentialStore {
    private let stored = Locked<Credential?>(nil)

    /// A store holding `credential`, or nothing.
    public init(_ credential: Credential? = nil) {
        stored.withLock { $0 = credential }
    }

    /// The stored credential, nil when there is none.
    public func load() -> Credential? { stored.withLock { $0 } }
    /// Replaces the stored credential.
    public func save(_ credential: Credential) { stored.withLock { $0 = credential } }
    /// Forgets the credential.
    public func clear() { stored.withLock { $0 = nil } }
}

/// Keeps the credential in a file readable by its owner only (mode 0600), replaced atomically:
/// the default on Linux.
public struct FileCredentialStore: CredentialStore {
    /// The file's path.
    public let path: String

    /// A store in the file at `path` (created on first save).
    public init(path: String) {
        self.path = path
    }

    /// The stored credential, nil when there is none.
    public func load() throws -> Credential? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        // A damaged file means logged out, not a crash at launch.
        return try? JSONDecoder().decode(Credential.self, from: data)
    }

    /// Replaces the stored credential.
    public func save(_ credential: Credential) throws {
        let data = try JSONEncoder().encode(credential)
        try FileSystem.writeAtomically(data, to: path, permissions: 0o600)
    }

    /// Forgets the credential.
    public func clear() throws {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    }
}

#if canImport(Security)
    /// Keeps the credential in the Keychain: the default on Apple platforms.
    public struct KeychainCredentialStore: CredentialStore {
        /// The Keychain service name; one credential per service.
        public let service: String

        /// A store under this Keychain service name.
        public init(service: String) {
            self.service = service
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: "roost-credential",
            ]
        }

        /// The stored credential, nil when there is none.
        public func load() throws -> Credential? {
            var query = query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            guard status == errSecSuccess, let data = item as? Data else { return nil }
            return try? JSONDecoder().decode(Credential.self, from: data)
        }

        /// Replaces the stored credential in place (one Keychain call), so that a crash leaves the
        /// old credential or the new one, never none: a rotated refresh token is saved this way.
        public func save(_ credential: Credential) throws {
            let data = try JSONEncoder().encode(credential)
            let changes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
            if status == errSecItemNotFound {
                var attributes = query
                attributes[kSecValueData as String] = data
                attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(attributes as CFDictionary, nil)
            }
            guard status == errSecSuccess else {
                throw RoostError(
                    status: nil, code: RoostError.Code.storageFailed,
                    message: "The Keychain refused the credential (OSStatus \(status)).")
            }
        }

        /// Forgets the credential.
        public func clear() throws {
            SecItemDelete(query as CFDictionary)
        }
    }
#endif
