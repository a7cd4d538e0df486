import RoostStore

/// ``IdempotencyStore`` on PostgreSQL. Instances share the keys: a reservation locks the key's
/// row, so the same key sent to two instances at once runs once.
public final class PostgresIdempotencyStore: IdempotencyStore {
    let database: PostgresDatabase

    public static let migrations = [
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

    public init(database: PostgresDatabase) {
        self.database = database
    }

    /// Inside an object write's transaction: the request's key is marked as run.
    static func markRun(_ mark: IdempotencyMark?, on connection: PostgresConnection) throws {
        guard let mark else { return }
        try connection.run(
            "UPDATE idempotency_keys SET ran = true WHERE scope = \(mark.scope) AND key = \(mark.key)")
    }

    public func reserve(
        scope: String, key: String, fingerprint: [UInt8], now: Int64, expiredBefore: Int64,
        abandonedBefore: Int64
    ) async throws -> IdempotencyReservation {
        try await database.write { connection in
            // A new key is inserted; an existing one is read under its row lock, so a concurrent
            // reservation on another instance waits for this decision.
            for _ in 0..<2 {
                let inserted = try connection.run(
                    """
                    INSERT INTO idempotency_keys (scope, key, fingerprint, created_at)
                    VALUES (\(scope), \(key), \(fingerprint), \(now)) ON CONFLICT DO NOTHING
                    """)
                if inserted == 1 { return .reserved }
                let existing = try connection.first(
                    """
                    SELECT fingerprint, completed, status, headers, body, created_at, ran FROM idempotency_keys
                    WHERE scope = \(scope) AND key = \(key) FOR UPDATE
                    """
                ) { row in
                    (
                        fingerprint: row.bytes(0), completed: row.bool(1),
                        response: RecordedResponse(
                            status: Int(row.integer(2)),
                            headers: RecordedResponse.decodeHeaders(row.text(3) ?? ""),
                            body: row.bytes(4)),
                        createdAt: row.integer(5), ran: row.bool(6)
                    )
                }
                // Released meanwhile: insert again.
                guard let existing else { continue }
                if existing.createdAt >= expiredBefore {
                    if existing.fingerprint != fingerprint { return .mismatch }
                    if existing.completed { return .completed(existing.response) }
                    if existing.createdAt >= abandonedBefore { return .inProgress }
                    if existing.ran { return .ranWithoutAnswer }
                }
                try connection.run(
                    """
                    UPDATE idempotency_keys SET fingerprint = \(fingerprint), completed = false, ran = false,
                    status = NULL, headers = NULL, body = NULL, created_at = \(now)
                    WHERE scope = \(scope) AND key = \(key)
                    """)
                return .reserved
            }
            return .inProgress
        }
    }

    public func complete(scope: String, key: String, response: RecordedResponse) async throws {
        let headers = RecordedResponse.encodeHeaders(response.headers)
        try await database.write { connection in
            try connection.run(
                """
                UPDATE idempotency_keys SET completed = true, status = \(Int64(response.status)),
                headers = \(headers), body = \(response.body) WHERE scope = \(scope) AND key = \(key)
                """)
        }
    }

    public func release(scope: String, key: String) async throws {
        try await database.write { connection in
            try connection.run("DELETE FROM idempotency_keys WHERE scope = \(scope) AND key = \(key)")
        }
    }

    @discardableResult
    public func purge(createdBefore cutoff: Int64) async throws -> Int {
        try await database.write { connection in
            try connection.run("DELETE FROM idempotency_keys WHERE created_at < \(cutoff)")
        }
    }
}
