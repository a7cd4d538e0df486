import RoostStore

/// ``IdempotencyStore`` on the Roost SQLite database.
public typealias SQLiteIdempotencyStore = SQLIdempotencyStore<SQLiteDatabase>

extension SQLIdempotencyStore where Database == SQLiteDatabase {
    static var migrations: [Migration] {
        [
            Migration(
                version: 5, name: "idempotency keys",
                sql: """
                    CREATE TABLE idempotency_keys (
                        scope TEXT NOT NULL,
                        key TEXT NOT NULL,
                        fingerprint BLOB NOT NULL,
                        completed INTEGER NOT NULL DEFAULT 0,
                        status INTEGER,
                        headers TEXT,
                        body BLOB,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (scope, key)
                    );
                    CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
                    """),
            Migration(
                version: 7, name: "idempotency keys mark their write",
                sql: "ALTER TABLE idempotency_keys ADD COLUMN ran INTEGER NOT NULL DEFAULT 0;"),
        ]
    }
}
