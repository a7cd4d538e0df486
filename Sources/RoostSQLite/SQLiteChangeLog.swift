import Foundation
import RoostStore

/// ``ChangeLog`` on the SQLite database: triggers on `objects` append to `changes` in the
/// statement's own transaction, so every write path (the object store, accounts, groups, blob
/// members, access lists, administrator commands) is logged without a line of Swift, and the
/// writer runs one more INSERT per write, nothing else. The row id is the sequence number: one
/// writer commits in order, and the newest entry is never trimmed, so ids are never reused.
public final class SQLiteChangeLog: ChangeLog {
    let database: SQLiteDatabase

    /// Commit time in wall-clock milliseconds, as SQLite computes it inside the statement.
    private static let now = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

    static let migrations = [
        Migration(
            version: 24, name: "change log",
            sql: """
                CREATE TABLE changes (
                    seq INTEGER PRIMARY KEY,
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    at INTEGER NOT NULL,
                    document TEXT,
                    acl TEXT,
                    previous_document TEXT,
                    previous_acl TEXT
                );
                CREATE TRIGGER objects_log_create AFTER INSERT ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, document, acl)
                VALUES (new.collection, new.guid, 'create', new.version, \(now), new.document, new.acl); END;
                CREATE TRIGGER objects_log_update AFTER UPDATE ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, document, acl, previous_document, previous_acl)
                VALUES (new.collection, new.guid, 'update', new.version, \(now), new.document, new.acl, old.document, old.acl); END;
                CREATE TRIGGER objects_log_delete AFTER DELETE ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, previous_document, previous_acl)
                VALUES (old.collection, old.guid, 'delete', old.version, \(now), old.document, old.acl); END;
                CREATE TRIGGER tokens_log_revoke AFTER DELETE ON tokens BEGIN
                INSERT INTO changes (collection, guid, operation, version, at)
                VALUES ('', old.id, 'revoke', 0, \(now)); END;
                """),
        Migration(
            version: 27, name: "who deleted an object, in its change",
            sql: "ALTER TABLE changes ADD COLUMN actor TEXT"),
    ]

    public init(database: SQLiteDatabase) {
        self.database = database
    }

    public func changes(after sequence: Int64, limit: Int, maxBytes: Int) async throws -> [Change] {
        try database.read { connection in
            var reader = ChangeReader(maxBytes: maxBytes)
            // Rows past the budget are stepped over without reading their documents.
            return try connection.query(
                """
                SELECT \(raw: ChangeReader.columns) FROM changes WHERE seq > \(sequence) ORDER BY seq
                LIMIT \(Int64(limit))
                """
            ) { reader.take($0) }.compactMap { $0 }
        }
    }

    public func window() async throws -> ChangeWindow {
        try database.read { connection in
            try connection.first("SELECT min(seq), max(seq) FROM changes") { row in
                row.isNull(0)
                    ? ChangeWindow(trimmedThrough: 0, last: 0)
                    : ChangeWindow(trimmedThrough: row.integer(0) - 1, last: row.integer(1))
            } ?? ChangeWindow(trimmedThrough: 0, last: 0)
        }
    }

    /// Deletes a prefix of the log, so that what stays is always everything after a position.
    public func trim(_ retention: ChangeRetention, now: Int64, batch: Int) async throws -> Int {
        let keep = Int64(retention.entries)
        return try await database.write { connection in
            guard let last = try connection.first("SELECT max(seq) FROM changes", { $0.integer(0) }) else {
                return 0
            }
            let oldest = try connection.query(
                "SELECT seq, at FROM changes WHERE seq <= \(last - keep) ORDER BY seq LIMIT \(Int64(batch))"
            ) { (sequence: $0.integer(0), at: $0.integer(1)) }
            guard let allowed = retention.trimBoundary(oldest: oldest, now: now) else { return 0 }
            // Not past what ASYNC script handlers still have to run, up to the hard cap.
            let boundary = try Self.outbox.pinnedBoundary(
                connection, allowed: allowed,
                forced: retention.forcedBoundary(oldest: oldest, last: last, now: now))
            return try connection.run("DELETE FROM changes WHERE seq <= \(boundary)")
        }
    }

    public func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        database.observeCommits(observer)
    }
}
