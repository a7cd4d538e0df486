import RoostStore

/// Every store on one PostgreSQL database, shared by any number of Roost instances.
public final class PostgresStorage: Storage {
    public let database: PostgresDatabase
    public let objects: PostgresObjectStore
    public let accounts: PostgresAccountStore
    public let idempotencyKeys: PostgresIdempotencyStore

    public var objectStore: any ObjectStore & FieldIndexStore & BlobReferenceStore { objects }
    public var accountStore: any AccountStore { accounts }
    public var idempotencyStore: any IdempotencyStore { idempotencyKeys }

    /// The whole schema, in order: objects 1–19, accounts 20–29, idempotency keys 30–39, blobs
    /// 60–69 (the tables exist whichever blob store is chosen).
    public static let migrations =
        PostgresObjectStore.migrations + PostgresAccountStore.migrations + PostgresIdempotencyStore.migrations
        + PostgresBlobStorage.migrations

    /// Connects, migrates and starts the pool (blocking: at startup only).
    public convenience init(configuration: PostgresConfiguration) throws {
        self.init(database: try PostgresDatabase(configuration: configuration, migrations: Self.migrations))
    }

    /// Uses a database that is already connected and migrated with ``migrations``.
    public init(database: PostgresDatabase) {
        self.database = database
        objects = PostgresObjectStore(database: database)
        accounts = PostgresAccountStore(database: database)
        idempotencyKeys = PostgresIdempotencyStore(database: database)
    }

    public func metrics() -> String { "" }

    public func close() async {
        await database.close()
    }
}
