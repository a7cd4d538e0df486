import Foundation
import RoostStore

/// The change log on the SQLite database: triggers on `objects` append to `changes` in the
/// statement's own transaction, so every write path (the object store, accounts, groups, blob
/// members, access lists, administrator commands) is logged without a line of Swift, and the
/// writer runs one more INSERT per write, nothing else. The row id is the sequence number: one
/// writer commits in order, and the newest entry is never trimmed, so ids are never reused.
public typealias SQLiteChangeLog = SQLChangeLog<SQLiteDatabase>

extension SQLChangeLog where Database == SQLiteDatabase {
    /// The writer's commits are the log's.
    public convenience init(database: SQLiteDatabase) {
        self.init(database: database, observeCommits: { database.observeCommits($0) })
    }

    static var migrations: [Migration] {
        [
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
                    VALUES (new.collection, new.guid, 'create', new.version, \(SQLiteDialect.clock), new.document, new.acl); END;
                    CREATE TRIGGER objects_log_update AFTER UPDATE ON objects BEGIN
                    INSERT INTO changes (collection, guid, operation, version, at, document, acl, previous_document, previous_acl)
                    VALUES (new.collection, new.guid, 'update', new.version, \(SQLiteDialect.clock), new.document, new.acl, old.document, old.acl); END;
                    CREATE TRIGGER objects_log_delete AFTER DELETE ON objects BEGIN
                    INSERT INTO changes (collection, guid, operation, version, at, previous_document, previous_acl)
                    VALUES (old.collection, old.guid, 'delete', old.version, \(SQLiteDialect.clock), old.document, old.acl); END;
                    CREATE TRIGGER tokens_log_revoke AFTER DELETE ON tokens BEGIN
                    INSERT INTO changes (collection, guid, operation, version, at)
                    VALUES ('', old.id, 'revoke', 0, \(SQLiteDialect.clock)); END;
                    """),
            Migration(
                version: 27, name: "who deleted an object, in its change",
                sql: "ALTER TABLE changes ADD COLUMN actor TEXT"),
        ]
    }
}
