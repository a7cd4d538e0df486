import RoostStore

/// Applies migrations to a PostgreSQL database under an advisory lock, so that instances
/// starting together apply each once.
struct PostgresMigrator {
    let migrations: [Migration]

    /// The advisory lock every Roost instance takes to migrate (the bytes of "roost-mg").
    static let lockKey: Int64 = 0x726f_6f73_742d_6d67

    /// Where the schema stands, changing nothing.
    func status(_ connection: PostgresConnection) throws -> SchemaStatus {
        try Migrator<PostgresConnection>(migrations: migrations).status(connection)
    }

    /// Applies the pending migrations in order under the advisory lock; throws
    /// ``SchemaTooNewError`` (naming `database`) when the database has migrations this build lacks.
    func migrate(_ connection: PostgresConnection, database: String, writtenBy: String = RoostRelease.version)
        throws
    {
        // Waiting for another instance's migrations, or running a long one, is not a slow query.
        try connection.execute("SET statement_timeout = 0")
        try connection.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
        defer {
            try? connection.execute(
                "SELECT pg_advisory_unlock(\(Self.lockKey)); SET statement_timeout = \(connection.configuration.statementTimeoutMilliseconds)"
            )
        }
        try Migrator<PostgresConnection>(migrations: migrations).migrate(
            connection, path: database, writtenBy: writtenBy)
    }
}
