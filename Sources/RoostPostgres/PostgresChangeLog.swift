import Foundation
import RoostStore
import Synchronization

/// ``ChangeLog`` on PostgreSQL, with SQLite's meaning: triggers on `objects` and `tokens` append
/// to `changes` in the write's own transaction, so no write path can skip the log.
///
/// Sequence numbers follow commit order, which a PostgreSQL sequence does not promise (a write
/// that drew 10 can commit after one that drew 11, and a reader between the two would skip 10
/// for good). So the number comes from one counter row, updated by the trigger: a writer holds
/// its lock until it commits, and the next writer draws after that commit. The triggers are
/// deferred constraint triggers, which run at COMMIT: a writer holds the row only while the
/// server commits, never across a round trip to the client. Object writes across all instances
/// still commit their log entries one at a time.
///
/// Deferred trigger events run at COMMIT in the order their rows changed: a user's deactivation
/// is logged before the revocations its own trigger then makes, as SQLite logs them.
///
/// Commits are announced with `NOTIFY roost_changes` (sent by PostgreSQL at commit, once per
/// transaction); ``PostgresListener`` hears them on every instance, and re-checks every second
/// as the fallback.
public final class PostgresChangeLog: ChangeLog {
    let database: PostgresDatabase
    private let listener: PostgresListener?

    /// The channel every commit that logs a change notifies.
    public static let channel = "roost_changes"

    public static let migrations = [
        Migration(
            version: 50, name: "change log",
            sql: """
                CREATE TABLE change_counter (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
                INSERT INTO change_counter VALUES (1, 0);
                CREATE TABLE changes (
                    seq bigint PRIMARY KEY,
                    collection text COLLATE "C" NOT NULL,
                    guid text COLLATE "C" NOT NULL,
                    operation text NOT NULL,
                    version bigint NOT NULL,
                    at bigint NOT NULL,
                    document text,
                    acl text,
                    previous_document text,
                    previous_acl text
                );
                \(logChangeFunction(recordingDeleter: false))
                CREATE CONSTRAINT TRIGGER change_log_objects AFTER INSERT OR UPDATE OR DELETE ON objects
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION roost_log_change();
                CREATE CONSTRAINT TRIGGER change_log_tokens AFTER DELETE ON tokens
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION roost_log_change();
                """),
        Migration(
            version: 51, name: "who deleted an object, in its change",
            sql: """
                ALTER TABLE changes ADD COLUMN actor text;
                \(logChangeFunction(recordingDeleter: true))
                """),
    ]

    /// The trigger function that appends a write's entry; from migration 51 a delete's entry
    /// records who deleted the object, which the store sets for its transaction (`roost.actor`).
    static func logChangeFunction(recordingDeleter: Bool) -> String {
        let deleteEntry =
            recordingDeleter
            ? """
            INSERT INTO changes (seq, collection, guid, operation, version, at, previous_document, previous_acl, actor)
                VALUES (next, OLD.collection, OLD.guid, 'delete', OLD.version, now_ms, OLD.document, OLD.acl,
                    NULLIF(current_setting('roost.actor', true), ''));
            """
            : """
            INSERT INTO changes (seq, collection, guid, operation, version, at, previous_document, previous_acl)
                VALUES (next, OLD.collection, OLD.guid, 'delete', OLD.version, now_ms, OLD.document, OLD.acl);
            """
        return """
            CREATE OR REPLACE FUNCTION roost_log_change() RETURNS trigger LANGUAGE plpgsql AS $roost$
            DECLARE
                next bigint;
                now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
            BEGIN
                UPDATE change_counter SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO next;
                IF TG_TABLE_NAME = 'tokens' THEN
                    INSERT INTO changes (seq, collection, guid, operation, version, at)
                    VALUES (next, '', OLD.id, 'revoke', 0, now_ms);
                ELSIF TG_OP = 'INSERT' THEN
                    INSERT INTO changes (seq, collection, guid, operation, version, at, document, acl)
                    VALUES (next, NEW.collection, NEW.guid, 'create', NEW.version, now_ms, NEW.document, NEW.acl);
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO changes (seq, collection, guid, operation, version, at, document, acl,
                        previous_document, previous_acl)
                    VALUES (next, NEW.collection, NEW.guid, 'update', NEW.version, now_ms, NEW.document, NEW.acl,
                        OLD.document, OLD.acl);
                ELSE
            \(deleteEntry)
                END IF;
                PERFORM pg_notify('roost_changes', '');
                RETURN NULL;
            END
            $roost$;
            """
    }

    /// `listener` announces commits of every instance; without one, observers are never called.
    public init(database: PostgresDatabase, listener: PostgresListener?) {
        self.database = database
        self.listener = listener
    }

    public func changes(after sequence: Int64, limit: Int, maxBytes: Int) async throws -> [Change] {
        try await database.read { connection in
            var reader = ChangeReader(maxBytes: maxBytes)
            return try connection.query(
                """
                SELECT \(raw: ChangeReader.columns) FROM changes WHERE seq > \(sequence) ORDER BY seq
                LIMIT \(Int64(limit))
                """
            ) { reader.take($0) }.compactMap { $0 }
        }
    }

    public func window() async throws -> ChangeWindow {
        try await database.read { connection in
            // The counter, not max(seq): a log trimmed to nothing still knows its last number.
            try connection.first(
                "SELECT (SELECT min(seq) FROM changes), (SELECT seq FROM change_counter WHERE id = 1)"
            ) { row in
                let last = row.integer(1)
                return ChangeWindow(trimmedThrough: row.isNull(0) ? last : row.integer(0) - 1, last: last)
            } ?? ChangeWindow(trimmedThrough: 0, last: 0)
        }
    }

    /// Deletes a prefix of the log, the newest `retention.entries` and those younger than its
    /// age excepted.
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
        listener?.onNotification(Self.channel, observer)
    }
}
