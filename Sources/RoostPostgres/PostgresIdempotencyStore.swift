import RoostStore

/// ``IdempotencyStore`` on PostgreSQL.
public typealias PostgresIdempotencyStore = SQLIdempotencyStore<PostgresDatabase>

extension SQLIdempotencyStore where Database == PostgresDatabase {
    public static var migrations: [Migration] {
        [
            Migration(
                version: 30, name: "idempotency keys",
                sql: """
                    CREATE TABLE idempotency_keys (
                        scope text COLLATE "C" NOT NULL,
                        key text COLLATE "C" NOT NULL,
                        fingerprint bytea NOT NULL,
                        completed boolean NOT NULL DEFAULT false,
                        ran boolean NOT NULL DEFAULT false,
                        status integer,
                        headers text,
                        body bytea,
                        created_at bigint NOT NULL,
                        PRIMARY KEY (scope, key)
                    );
                    CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
                    """)
        ]
    }
}
