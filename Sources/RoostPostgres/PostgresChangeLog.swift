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
public typealias PostgresChangeLog = SQLChangeLog<PostgresDatabase>

extension SQLChangeLog where Database == PostgresDatabase {
    /// `listener` announces commits of every instance; without one, observers are never called.
    public convenience init(database: PostgresDatabase, listener: PostgresListener?) {
        self.init(
            database: database,
            observeCommits: { observer in listener?.onNotification(PostgresChangeLog.channel, observer) })
    }

    /// The channel every commit that logs a change notifies.
    public static var channel: String { "roost_changes" }

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
}
