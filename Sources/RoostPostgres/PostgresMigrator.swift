import Foundation
import RoostStore

/// Applies migrations to a PostgreSQL database, each in one transaction, under an advisory lock
/// so that instances starting together apply each once; records them in `roost_schema` and the
/// writing build in `roost_meta`, as SQLite's migrator does.
struct PostgresMigrator {
    let migrations: [Migration]

    /// The advisory lock every Roost instance takes to migrate (the bytes of "roost-mg").
    static let lockKey: Int64 = 0x726f_6f73_742d_6d67

    var knownVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Where the schema stands, changing nothing.
    func status(_ connection: PostgresConnection) throws -> SchemaStatus {
        let tables = Set(
            try connection.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('roost_schema', 'roost_meta')"
            ) { $0.text(0) ?? "" })
        let applied =
            tables.contains("roost_schema")
            ? try connection.query("SELECT version FROM roost_schema ORDER BY version") { Int($0.integer(0)) }
            : []
        let writtenBy =
            tables.contains("roost_meta")
            ? try connection.first("SELECT value FROM roost_meta WHERE key = 'written_by'") { $0.text(0) }
                ?? nil
            : nil
        let known = Set(migrations.map(\.version))
        let recorded = Set(applied)
        return SchemaStatus(
            applied: applied,
            pending: migrations.filter { !recorded.contains($0.version) }.sorted { $0.version < $1.version },
            unknown: applied.filter { !known.contains($0) }, writtenBy: writtenBy, knownVersion: knownVersion)
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
        if let refusal = try status(connection).refusal(path: database) { throw refusal }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS roost_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL);
            CREATE TABLE IF NOT EXISTS roost_meta (key text PRIMARY KEY, value text NOT NULL);
            """)
        for migration in try status(connection).pending {
            try connection.execute("BEGIN")
            do {
                try connection.execute(migration.sql)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try connection.run(
                    "INSERT INTO roost_schema (version, name, applied_at) VALUES (\(migration.version), \(migration.name), \(now))"
                )
                try recordVersions(connection, writtenBy: writtenBy)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        try recordVersions(connection, writtenBy: writtenBy)
    }

    private func recordVersions(_ connection: PostgresConnection, writtenBy: String) throws {
        let version =
            try connection.first("SELECT coalesce(max(version), 0) FROM roost_schema") { $0.integer(0) } ?? 0
        try connection.run(
            """
            INSERT INTO roost_meta (key, value) VALUES ('schema_version', \(String(version))), ('written_by', \(writtenBy))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE roost_meta.value IS DISTINCT FROM excluded.value
            """)
    }
}
