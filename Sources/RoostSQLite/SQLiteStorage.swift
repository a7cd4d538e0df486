import Foundation
import RoostStore

/// Every store on one SQLite database in the data folder.
public final class SQLiteStorage: Storage {
    public let database: SQLiteDatabase
    public let objects: SQLiteObjectStore
    public let accounts: SQLiteAccountStore
    public let idempotencyKeys: SQLiteIdempotencyStore
    public let changes: SQLiteChangeLog
    public let outbox: SQLiteScriptOutbox
    public let push: SQLitePushStore
    public let mail: SQLiteMailStore
    public let refresh: SQLiteRefreshStore
    public let identities: SQLiteIdentityStore

    public var objectStore: any ObjectStore & FieldIndexStore & BlobReferenceStore { objects }
    public var collectionBrowser: any CollectionBrowsing { objects }
    public var accountStore: any AccountStore { accounts }
    public var idempotencyStore: any IdempotencyStore { idempotencyKeys }
    public var changeLog: any ChangeLog { changes }
    public var scriptOutbox: any ScriptOutboxStore { outbox }
    public var pushStore: any PushStore { push }
    public var mailStore: any MailStore { mail }
    public var emailTokens: any EmailTokenStore { accounts }
    public var refreshStore: any RefreshStore { refresh }
    public var identityStore: any IdentityStore { identities }
    /// One process serves an SQLite database, so its memory is where failures are counted.
    public let loginFailures: any LoginFailureStore = InMemoryLoginFailures()
    public var sharedDefinitions: (any SharedDefinitionStore)? { nil }

    public func metrics() -> String {
        """
        # HELP roost_sqlite_wal_bytes Size of the SQLite write-ahead log (roost.sqlite-wal).
        # TYPE roost_sqlite_wal_bytes gauge
        roost_sqlite_wal_bytes \(database.walBytes)
        # HELP roost_sqlite_reads_running Reads running on the reader threads now.
        # TYPE roost_sqlite_reads_running gauge
        roost_sqlite_reads_running \(database.runningReads)
        # HELP roost_sqlite_reads_waiting Reads waiting for a reader thread.
        # TYPE roost_sqlite_reads_waiting gauge
        roost_sqlite_reads_waiting \(database.waitingReads)
        # HELP roost_sqlite_writes_queued Writes waiting for the writer's next transaction.
        # TYPE roost_sqlite_writes_queued gauge
        roost_sqlite_writes_queued \(database.queuedWriteCount)

        """
    }

    public func close() async {
        await database.close()
    }

    /// The database file's name in the data folder; SQLite keeps `-wal` and `-shm` beside it.
    public static let fileName = "roost.sqlite"

    /// Opens `roost.sqlite` in `directory`, creating the folder (mode 0700) and the schema as
    /// needed; `collections` are the domain's users and groups.
    public init(
        directory: String, collections: AccountCollections, durability: Durability = .normal,
        readLimits: ReadLimits = ReadLimits()
    ) throws {
        database = try Self.openDatabase(directory: directory, durability: durability, readLimits: readLimits)
        objects = SQLiteObjectStore(database: database, collections: collections)
        accounts = SQLiteAccountStore(database: database, collections: collections)
        idempotencyKeys = SQLiteIdempotencyStore(database: database)
        changes = SQLiteChangeLog(database: database)
        outbox = SQLiteScriptOutbox(database: database)
        push = SQLitePushStore(database: database)
        mail = SQLiteMailStore(database: database)
        refresh = SQLiteRefreshStore(database: database)
        identities = SQLiteIdentityStore(database: database, collections: collections)
    }

    static func openDatabase(directory: String, durability: Durability, readLimits: ReadLimits = ReadLimits())
        throws -> SQLiteDatabase
    {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory + "/" + fileName
        try restrictModes(databasePath: path)
        return try SQLiteDatabase(
            path: path, durability: durability, readLimits: readLimits, migrations: migrations)
    }

    /// The integrity and schema of the database at `path`, read without migrating or recording
    /// anything.
    public static func inspect(databasePath path: String) throws -> (problems: [String], schema: SchemaStatus)
    {
        guard access(path, R_OK) == 0 else {
            throw SQLiteError(code: 14, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        return (
            try SQLiteBackup.integrityProblems(connection),
            try SQLiteMigrator(migrations: migrations).status(connection)
        )
    }

    /// Applies the pending migrations to the database in `directory`, one transaction each;
    /// `willApply` runs before each. Throws ``SchemaTooNewError`` for a newer database.
    public static func migrate(directory: String, willApply: (Migration) -> Void) throws {
        let path = directory + "/" + fileName
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode = WAL")
        try SQLiteMigrator(migrations: migrations).migrate(connection, path: path, willApply: willApply)
    }

    /// Creates the database file 0600 before SQLite does (SQLite gives `-wal` and `-shm` the
    /// database file's mode), and takes group and world access away from files an older version
    /// made 0644: they hold password hashes and emails.
    static func restrictModes(databasePath path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw SQLiteError(
                code: 14, message: "cannot open the database: \(String(cString: strerror(code)))",
                systemErrno: code)
        }
        Glibc.close(descriptor)
        for file in [path, path + "-wal", path + "-shm"] {
            var status = stat()
            if stat(file, &status) == 0, status.st_mode & 0o077 != 0 {
                chmod(file, status.st_mode & 0o700)
            }
        }
    }
}
