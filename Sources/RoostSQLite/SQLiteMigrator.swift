import Foundation
import RoostStore

/// Applies migrations, one transaction each, and records the schema version and the writing
/// build in `roost_meta`.
struct Migrator {
    let migrations: [Migration]

    var knownVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Reads where the schema stands, changing nothing.
    func status(_ connection: SQLiteConnection) throws -> SchemaStatus {
        let tables = Set(
            try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) ?? "" })
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

    /// Throws ``SchemaTooNewError`` when the database holds migrations this build does not know.
    func checkNotNewer(_ connection: SQLiteConnection, path: String) throws {
        if let refusal = try status(connection).refusal(path: path) { throw refusal }
    }

    /// Applies the pending migrations in order, each in its own transaction: one that fails is
    /// rolled back whole and stops the rest. `willApply` runs before each.
    func migrate(
        _ connection: SQLiteConnection, path: String, writtenBy: String = RoostRelease.version,
        willApply: (Migration) -> Void = { _ in }
    ) throws {
        try checkNotNewer(connection, path: path)
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS roost_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS roost_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            """)
        for migration in try status(connection).pending {
            willApply(migration)
            try connection.execute("BEGIN IMMEDIATE")
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

    private func recordVersions(_ connection: SQLiteConnection, writtenBy: String) throws {
        let version = try connection.first("SELECT max(version) FROM roost_schema") { $0.integer(0) } ?? 0
        try connection.run(
            """
            INSERT INTO roost_meta (key, value) VALUES ('schema_version', \(String(version))), ('written_by', \(writtenBy))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value
            """)
    }
}
