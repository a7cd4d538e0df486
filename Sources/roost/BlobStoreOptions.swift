import RoostServer

/// `roost serve` options for where blob bytes live.
extension ServeOption {
    static let blobStore: [ServeOption] = [
        ServeOption(
            flag: "--blob-store", variable: "ROOST_BLOB_STORE", valueName: "KIND",
            help:
                "where blob bytes live: 'directory' (the data folder's blobs/, or a folder all instances share) or 'database' (chunked rows in the --database PostgreSQL, cached locally); default: database with --database, else directory"
        ) {
            guard let kind = BlobStoreKind(rawValue: $1) else {
                throw UsageError(message: "--blob-store takes 'database' or 'directory', not '\($1)'")
            }
            $0.blobStore = kind
        },
        ServeOption(
            flag: "--blob-cache-size", variable: "ROOST_BLOB_CACHE_SIZE", valueName: "SIZE",
            help:
                "with --blob-store database: the local cache of blobs read from the database, least recently used out first (default 1GiB)"
        ) {
            $0.blobCacheBytes = try size($1, flag: "--blob-cache-size")
        },
    ]

    /// `--blob-store database` needs a PostgreSQL database to keep them in.
    static func checkBlobStore(_ configuration: ServerConfiguration) throws {
        if configuration.blobStore == .database, configuration.databaseURL == nil {
            throw UsageError(
                message:
                    "--blob-store database keeps blobs in the PostgreSQL database, so it needs --database postgres://… (or ROOST_DATABASE_URL); with SQLite, blobs live in the data folder (--blob-store directory)"
            )
        }
    }
}
