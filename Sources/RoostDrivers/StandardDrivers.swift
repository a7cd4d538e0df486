import RoostCore
import RoostPostgres
import RoostPush
import RoostSQLite
import RoostServer
import RoostStore

/// The drivers of a Roost server: PostgreSQL with ``ServerConfiguration/databaseURL``, else the
/// embedded SQLite database in the data folder; blobs in the data folder or the database.
public struct StandardDrivers: StorageDrivers {
    public init() {}

    public func openStorage(_ configuration: ServerConfiguration) throws -> any Storage {
        guard let url = configuration.databaseURL else {
            return try SQLiteStorage(
                directory: configuration.dataDirectory, collections: .builtIn,
                durability: configuration.durability,
                readLimits: configuration.readLimits)
        }
        var postgres = try PostgresConfiguration(connectionString: url)
        postgres.poolSize = configuration.databaseConnections
        postgres.idleConnectionTimeout = configuration.databaseIdleTimeout
        postgres.statementTimeout = configuration.readLimits.timeout
        return try PostgresStorage(configuration: postgres, collections: .builtIn)
    }

    /// Blob I/O threads: 2 for files (a rename, an open); as many as the database store has
    /// connections, since an upload or a cache miss holds its thread for a round trip per chunk.
    public func blobIOThreads(_ configuration: ServerConfiguration) -> Int {
        configuration.effectiveBlobStore == .database ? PostgresBlobStorage.defaultConnections : 2
    }

    /// The database's blob tables come with its migrations (`PostgresStorage.migrations`).
    public func openBlobStorage(_ configuration: ServerConfiguration) throws -> any BlobStorage {
        switch configuration.effectiveBlobStore {
        case .directory:
            return try FileBlobStorage(dataDirectory: configuration.dataDirectory)
        case .database:
            guard let url = configuration.databaseURL else {
                throw BlobStoreConfigurationError(
                    message:
                        "--blob-store database keeps blobs in the PostgreSQL database, so it needs --database postgres://… (or ROOST_DATABASE_URL); with SQLite, blobs live in the data folder (--blob-store directory)"
                )
            }
            var postgres = try PostgresConfiguration(connectionString: url)
            postgres.idleConnectionTimeout = configuration.databaseIdleTimeout
            return try PostgresBlobStorage(
                dataDirectory: configuration.dataDirectory, configuration: postgres,
                cacheBytes: configuration.blobCacheBytes)
        }
    }
}

extension StandardDrivers {
    /// The push sender for the configured providers (RoostPush's APNs and FCM clients); nil when
    /// none is configured. Reads the key files now, so a bad one stops the server at start.
    public static func pushSender(for settings: PushProviderSettings) throws(PushConfigurationError)
        -> (any PushSender)?
    {
        guard settings.hasAPNs || settings.hasFCM else { return nil }
        if let problem = settings.problem { throw PushConfigurationError(problem) }
        var configuration = PushConfiguration()
        if let keyFile = settings.apnsKeyFile, let keyID = settings.apnsKeyID,
            let teamID = settings.apnsTeamID
        {
            var apns = APNsConfiguration(keyFile: keyFile, keyID: keyID, teamID: teamID)
            apns.productionURL = settings.apnsProductionURL
            apns.sandboxURL = settings.apnsSandboxURL
            apns.caFile = settings.caFile
            configuration.apns = apns
        }
        if let serviceAccount = settings.fcmServiceAccountFile {
            var fcm = FCMConfiguration(serviceAccountFile: serviceAccount)
            fcm.baseURL = settings.fcmBaseURL
            fcm.caFile = settings.caFile
            configuration.fcm = fcm
        }
        return try PushSenders(configuration: configuration)
    }
}

extension StandardDrivers {
    /// RoostPush's JWKS verifier (OpenSSL, libcurl), started on the first sign-in.
    public func identityVerifier(_ configuration: ServerConfiguration) -> (any IdentityTokenVerifier)? {
        LazyJWKSVerifier(
            settings: configuration.signIn, clock: configuration.clock,
            workers: configuration.passwordHasher.workers)
    }
}

extension Application {
    /// A server on the standard drivers (``StandardDrivers``).
    public convenience init(configuration: ServerConfiguration) throws {
        try self.init(configuration: configuration, drivers: StandardDrivers())
    }
}
