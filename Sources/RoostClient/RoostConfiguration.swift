import Foundation

/// How a ``Roost`` reaches its server and where it keeps its state.
public struct RoostConfiguration: Sendable {
    /// The server's root URL, e.g. `https://api.example.com`.
    public var serverURL: URL
    /// The folder for the offline queue, the cache and the device id (created with mode 0700).
    public var storageFolder: String
    /// Where the token is kept between launches.
    public var credentialStore: any CredentialStore
    /// What carries requests.
    public var transport: any Transport
    /// This installation's id; tokens are per device. Generated once and kept in the storage
    /// folder unless set.
    public var deviceId: String?
    /// How the token travels: `Authorization: Bearer` (the default) or `X-Token` (seed 003).
    public var tokenHeader = TokenHeader.authorizationBearer
    /// A label for the device kind, sent at login.
    public var deviceType: String
    /// Seconds the queue waits between attempts while the server answers (with 5xx, say).
    public var retryInterval: TimeInterval = 1
    /// Seconds the queue waits between attempts while the server cannot be reached.
    public var offlineRetryInterval: TimeInterval = 10
    /// The most bytes the disk cache holds before evicting the least recently used answers.
    public var cacheLimit = 20 * 1024 * 1024
    /// The cache policy of reads that do not name one.
    public var defaultCachePolicy = CachePolicy.networkElseCache
    /// How a query never answered on this device is answered while the server cannot be reached.
    public var offlineQueries = OfflineQueryPolicy.answerFromCachedObjects
    /// What a queued update does when the same field was changed elsewhere since it was read.
    public var conflictPolicy = ConflictPolicy.serverWins
    /// How long a change stream (``Roost/changes(of:after:)-(Model.Type,_)``) first waits before reconnecting
    /// after a drop; the wait doubles with each failed attempt, with jitter.
    public var reconnectDelay: TimeInterval = 0.5
    /// The longest a change stream waits between reconnection attempts, in seconds.
    public var maxReconnectDelay: TimeInterval = 30
    /// The most changes a change stream holds for a loop that has not read them yet. When it is
    /// full the stream disconnects and later resumes from the last change it held, so a slow
    /// loop costs bounded memory and loses nothing.
    public var changeBufferLimit = 1000
    /// Whether logins ask for a session that refreshes (`"refresh": true`): a short-lived access
    /// token kept in memory only, and a rotating refresh token in the credential store. Off by
    /// default: two clients sharing one credential store (an app and its extension) can race to
    /// exchange the same refresh token, which the server treats as theft. A server that always
    /// refreshes (`--refresh-tokens always`) gets a session that refreshes either way.
    public var requestsRefreshTokens = false
    /// How long before its access token expires a session that refreshes exchanges its refresh
    /// token, in seconds (at most half the token's lifetime), so requests rarely meet an expired
    /// token.
    public var tokenRefreshMargin: TimeInterval = 60
    /// Where the SDK reads the time (for token expiry); tests move it instead of waiting.
    public var now: @Sendable () -> Date = { Date() }
    /// Whether queued writes are sent in the background as soon as the client exists; tests and
    /// command-line tools may prefer to call ``Roost/flush()`` themselves.
    public var deliversInBackground = true

    /// A configuration with the platform's defaults: state under Application Support (on Linux
    /// `~/.local/share`), the token in the Keychain (on Linux a 0600 file), URLSession.
    public init(
        serverURL: URL, storageFolder: String? = nil, credentialStore: (any CredentialStore)? = nil,
        transport: (any Transport)? = nil, requestTimeout: TimeInterval = 30
    ) {
        self.serverURL = serverURL
        let folder = storageFolder ?? Self.defaultStorageFolder(for: serverURL)
        self.storageFolder = folder
        #if canImport(Security)
            self.credentialStore =
                credentialStore ?? KeychainCredentialStore(service: "roost:" + serverURL.absoluteString)
            deviceType = "apple"
        #else
            self.credentialStore = credentialStore ?? FileCredentialStore(path: folder + "/credential.json")
            deviceType = "linux"
        #endif
        self.transport = transport ?? URLSessionTransport(serverURL: serverURL, timeout: requestTimeout)
    }

    static func defaultStorageFolder(for serverURL: URL) -> String {
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?.path
            ?? NSTemporaryDirectory()
        let server = "\(serverURL.host ?? "server")-\(serverURL.port ?? 0)"
        return base + "/Roost/" + server
    }
}

/// The header that carries the token.
public enum TokenHeader: Sendable {
    /// `Authorization: Bearer <token>`.
    case authorizationBearer
    /// `X-Token: <token>`.
    case xToken
}
