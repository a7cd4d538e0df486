import RoostPostgres
import RoostStore

/// Where blob bytes live (`--blob-store`).
public enum BlobStoreKind: String, Sendable, CaseIterable {
    /// Files in the data folder (`DATA/blobs`), or a folder every instance shares.
    case directory
    /// Chunked rows in the PostgreSQL database, with a local cache of whole blobs.
    case database
}

/// `--blob-store database` without a PostgreSQL database.
public struct BlobStoreConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension ServerConfiguration {
    /// The blob store in force: as chosen, else the database's when there is one.
    public var effectiveBlobStore: BlobStoreKind {
        blobStore ?? (databaseURL == nil ? .directory : .database)
    }
}

extension Application {
    /// Blob I/O threads: 2 for files (a rename, an open); as many as the database store has
    /// connections, since an upload or a cache miss holds its thread for a round trip per chunk.
    static func blobIOThreads(_ configuration: ServerConfiguration) -> Int {
        configuration.effectiveBlobStore == .database ? PostgresBlobStorage.defaultConnections : 2
    }

    /// The blob store the configuration chooses. The database's tables come with the database's
    /// migrations (`PostgresStorage.migrations`).
    static func openBlobStorage(_ configuration: ServerConfiguration) throws -> any BlobStorage {
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
