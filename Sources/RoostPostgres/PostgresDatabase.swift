import RoostStore

/// A PostgreSQL database reached through a pool of connections, each on its own thread.
///
/// Bodies run on a pool thread with that thread's connection; the caller's task waits without
/// holding a thread. Task cancellation sends a cancel request for the running statement.
public final class PostgresDatabase: Sendable {
    public let configuration: PostgresConfiguration
    let pool: PostgresPool

    /// Connects (at least one connection must succeed, else throws), then runs `migrations` that
    /// are not recorded yet, each in its own transaction, under `pg_advisory_lock` so that
    /// instances starting together are safe. Refuses (``SchemaTooNewError``) a database with
    /// migration versions this build does not know. No migrations opens the schema unchecked.
    ///
    /// Blocking, at startup only (never on an event loop).
    public init(configuration: PostgresConfiguration, migrations: [Migration]) throws {
        self.configuration = configuration
        let connection = try PostgresConnection(configuration: configuration)
        defer { connection.close() }
        if !migrations.isEmpty {
            try PostgresMigrator(migrations: migrations).migrate(connection, database: configuration.redacted)
        }
        pool = PostgresPool(configuration: configuration)
    }

    /// Where the database's schema stands against `migrations`, changing nothing (blocking).
    public static func schemaStatus(configuration: PostgresConfiguration, migrations: [Migration]) throws
        -> SchemaStatus
    {
        let connection = try PostgresConnection(configuration: configuration)
        defer { connection.close() }
        return try PostgresMigrator(migrations: migrations).status(connection)
    }

    /// Runs `body` on a pool thread, outside a transaction (autocommit).
    ///
    /// Throws ``StoreError/busy`` when the queue is full, ``StoreError/timeout(after:)`` when
    /// `statement_timeout` fires, ``StoreError/unavailable`` when the server cannot be reached
    /// (the pool reconnects with backoff meanwhile), ``StoreError/closed`` after ``close()``, and
    /// `CancellationError` when the task is cancelled.
    public func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws
        -> T
    {
        try await pool.run(.plain, body)
    }

    /// Runs `body` inside BEGIN … COMMIT (ROLLBACK when it throws), READ COMMITTED.
    public func write<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws
        -> T
    {
        try await pool.run(.transaction, body)
    }

    /// Runs `body` in one REPEATABLE READ, READ ONLY transaction (a page and its total agree).
    public func snapshotRead<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T)
        async throws -> T
    {
        try await pool.run(.snapshot, body)
    }

    /// Jobs waiting for a connection now (for `/metrics`).
    public var queuedJobs: Int { pool.waiting }
    /// Jobs running on a connection now (for `/metrics`).
    public var runningJobs: Int { pool.running }

    /// Finishes queued jobs, closes every connection and joins the threads.
    public func close() async {
        await pool.close()
    }
}
