import Foundation

/// Applies migrations, one transaction each, and records them in `roost_schema` and the schema
/// version and the writing build in `roost_meta`: the same bookkeeping on every driver.
public struct Migrator<Connection: SQLConnection> {
    typealias Dialect = Connection.Dialect
    public let migrations: [Migration]

    public init(migrations: [Migration]) {
        self.migrations = migrations
    }

    public var knownVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Reads where the schema stands, changing nothing.
    public func status(_ connection: Connection) throws -> SchemaStatus {
        let tables = Set(try connection.query(SQL(stringLiteral: Dialect.tableNames)) { $0.text(0) ?? "" })
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

    /// Throws ``SchemaTooNewError`` (naming `path`) when the database holds migrations this
    /// build does not know.
    public func checkNotNewer(_ connection: Connection, path: String) throws {
        if let refusal = try status(connection).refusal(path: path) { throw refusal }
    }

    /// Applies the pending migrations in order, each in its own transaction: one that fails is
    /// rolled back whole and stops the rest. `willApply` runs before each.
    public func migrate(
        _ connection: Connection, path: String, writtenBy: String = RoostRelease.version,
        willApply: (Migration) -> Void = { _ in }
    ) throws {
        try checkNotNewer(connection, path: path)
        try connection.execute(Dialect.migrationTables)
        for migration in try status(connection).pending {
            willApply(migration)
            try connection.execute(Dialect.beginWrite)
            do {
                try connection.execute(migration.sql)
                try migration.step?.run(on: connection)
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

    private func recordVersions(_ connection: Connection, writtenBy: String) throws {
        let version =
            try connection.first("SELECT coalesce(max(version), 0) FROM roost_schema") { $0.integer(0) } ?? 0
        try connection.run(
            """
            INSERT INTO roost_meta (key, value) VALUES ('schema_version', \(String(version))), ('written_by', \(writtenBy))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE roost_meta.value IS DISTINCT FROM excluded.value
            """)
    }
}
