import Foundation
import RoostCore
import RoostHTTP
import RoostScripts
import RoostStore

/// Everything `roost serve` can be told.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDirectory = "./roost-data"
    /// A PostgreSQL database shared by every instance (`--database`): a postgres:// URL or
    /// libpq's key=value string. Nil keeps everything in the data folder's SQLite database.
    public var databaseURL: String?
    /// Connections to PostgreSQL, each on a thread of its own (`--database-connections`).
    public var databaseConnections = 8
    /// How long an idle PostgreSQL connection stays open.
    public var databaseIdleTimeout: Duration = .seconds(60)
    public var loopCount = ProcessInfo.processInfo.activeProcessorCount
    public var maxBodyBytes = 10 * 1024 * 1024
    /// The largest blob an upload may carry.
    public var maxBlobBytes = 50 * 1024 * 1024
    public var readTimeout = 30
    public var idleTimeout = 60
    /// Seconds an answer may wait for the client to read before the connection is closed.
    public var writeTimeout = 60
    /// Open connections at most (`--max-connections`); nil derives it from the descriptor limit.
    public var maxConnections: Int?
    /// Open connections from one client address at most (`--max-connections-per-client`).
    public var maxConnectionsPerClient = 256
    /// Seconds a TLS handshake may take (`--tls-handshake-timeout`).
    public var tlsHandshakeTimeout = 10
    /// The HTTP limits on uploads in flight, upload rate and unsent output (see
    /// ``HTTPServer/Configuration``).
    public var maxUploads = 64
    public var maxUploadsPerClient = 4
    public var minimumUploadRate = 1024
    public var maxUnsentBytes = 2 << 20
    public var maxHeldRequestBytes = 256 << 20
    public var durability = Durability.normal
    /// Reader threads, their queue and the deadline of every list, query, count and random pick.
    public var readLimits = ReadLimits(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))
    public var accessLog = true
    /// Proxies whose `Forwarded`, `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Request-Id` are
    /// believed (`--trusted-proxies`); none by default.
    public var trustedProxies = TrustedProxies()
    /// Browser origins allowed to call the API (`--cors-origins`), besides the app definition's
    /// `cors.allowedOrigins`; each as ``AppDefinition/normalizedOrigin(_:)`` gives it.
    public var corsOrigins: [String] = []
    /// The least severe log line written (`--log-level`), and the lines' shape (`--log-format`,
    /// which the access log follows too).
    public var logLevel = Logger.Level.info
    public var logFormat = Logger.Format.text
    /// Where log lines go instead of standard error (tests read them).
    public var logSink: (@Sendable ([UInt8]) -> Void)?
    /// How many live tokens a user may hold.
    public var sessionPolicy = SessionPolicy.perDevice
    /// How long a token lives without use, in seconds; each use (at most hourly) extends it.
    public var tokenLifetime = 30 * 24 * 60 * 60
    /// Whether logins get short-lived access tokens with rotating refresh tokens
    /// (`--refresh-tokens`); the app definition's `settings.refreshTokens` overrides it. A
    /// refresh token lives ``tokenLifetime`` from its issue.
    public var refreshMode = RefreshMode.off
    /// Seconds an access token of a session that refreshes lives (`--access-token-lifetime`).
    public var accessTokenLifetime = 15 * 60
    /// Argon2id cost; tests lower it.
    public var passwordHasher = PasswordHasher.standard
    /// Failed-login limits.
    public var loginLimits = LoginThrottle.Limits()
    /// Where access-log lines go instead of standard output (tests read them).
    public var accessLogSink: (@Sendable ([UInt8]) -> Void)?
    /// Where timestamps come from; tests set a fixed clock.
    public var clock: any WallClock = SystemWallClock()
    /// Where guids come from; tests set a predictable source.
    public var guids: any GuidGenerator = RandomGuidGenerator()
    /// The app definition file (`roost.json`); when nil, ``appDefinition`` applies.
    public var appDefinitionPath: String?
    /// The definition used without a file: FatFractal's default rules unless set.
    public var appDefinition = AppDefinition()
    /// TLS: the certificate chain and its key, PEM files (`--tls-cert`, `--tls-key`); both or
    /// neither. Reloaded by ``Application/reloadTLS()``.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// A plain-HTTP port whose every answer is a redirect to HTTPS (`--redirect-http`); 0 picks
    /// a free one. Only with TLS.
    public var redirectHTTPPort: Int?
    /// Whether answers over TLS carry `Strict-Transport-Security: max-age=31536000` (`--hsts`).
    public var strictTransportSecurity = true
    /// The realtime streams' limits and the change log's retention (`--events-*`).
    public var events = EventLimits()
    /// Where blob bytes live (`--blob-store`); nil: the data folder with SQLite, the database with
    /// ``databaseURL``.
    public var blobStore: BlobStoreKind?
    /// The local cache of blobs read from the database, in bytes (`--blob-cache-size`).
    public var blobCacheBytes = 1 << 30
    /// A web app's files served on the API's origin (`--public-dir`); see ``StaticHosting``.
    public var publicDirectory: String?
    /// The client addresses that may reach the dashboard (`/_/`) and `/ff/admin/…`
    /// (`--admin-allow`); nil: any address (the admin right is checked either way).
    public var adminAllowed: TrustedProxies?
    /// How much `GET /ff/admin/collections` lists and counts (the dashboard's first page).
    public var collectionListing = CollectionAdministration.Limits()
    /// FatFractal's app name in URLs (`--app-prefix`): `/<app>/ff/…` is `/ff/…`, `/<app>/x` a file.
    public var appPrefix: String?
    /// Server-side scripts: worker processes, time and memory per run.
    public var scripts = ScriptOptions()
    /// Client addresses served `/metrics` without an administrator's token (`--metrics-allow`);
    /// none by default.
    public var metricsAllowed = TrustedProxies()
    /// FatFractal's system user's password (`--system-password-file`); nil: `system` never logs in.
    public var systemPassword: String?
    /// Push notifications: the provider's sender (composed by `roost serve`) and the dispatcher's pacing.
    public var push = PushOptions()
    /// Mail: the SMTP sender (composed by `roost serve`), the sender address and password reset.
    public var mail = MailOptions()
    /// Sign in with Apple and Google: client ids, the providers' issuers and key sets, linking.
    public var signIn = SignInSettings()

    public init() {}
}
