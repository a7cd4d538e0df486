import Foundation

/// Every store on one SQLite database in the data folder.
public final class SQLiteStorage: Sendable {
    public let database: SQLiteDatabase
    public let objects: SQLiteObjectStore
    public let accounts: SQLiteAccountStore
    public let idempotencyKeys: SQLiteIdempotencyStore

    /// The whole schema, in order.
    public static let migrations =
        SQLiteObjectStore.migrations + SQLiteAccountStore.migrations
        + SQLiteIdempotencyStore.migrations + SQLiteObjectStore.blobMigrations

    /// Opens `roost.sqlite` in `directory`, creating the folder (mode 0700) and the schema as needed.
    public init(directory: String, durability: Durability = .normal, readLimits: ReadLimits = ReadLimits())
        throws
    {
        database = try Self.openDatabase(directory: directory, durability: durability, readLimits: readLimits)
        objects = SQLiteObjectStore(database: database)
        accounts = SQLiteAccountStore(database: database)
        idempotencyKeys = SQLiteIdempotencyStore(database: database)
    }

    static func openDatabase(directory: String, durability: Durability, readLimits: ReadLimits = ReadLimits())
        throws -> SQLiteDatabase
    {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try SQLiteDatabase(
            path: directory + "/roost.sqlite", durability: durability, readLimits: readLimits,
            migrations: migrations)
    }
}
