/// ``IdempotencyStore`` written once. Instances sharing a database share the keys: a reservation
/// locks the key's row (SQLite's one writer is that lock), so the same key sent to two
/// instances at once runs once.
public final class SQLIdempotencyStore<Database: SQLDatabase>: IdempotencyStore {
    typealias Dialect = Database.Connection.Dialect
    let database: Database

    public init(database: Database) {
        self.database = database
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
                    SELECT fingerprint, CASE WHEN completed THEN 1 ELSE 0 END, status, headers, body, created_at,
                    CASE WHEN ran THEN 1 ELSE 0 END FROM idempotency_keys
                    WHERE scope = \(scope) AND key = \(key)\(raw: Dialect.rowLock)
                    """
                ) { row in
                    (
                        fingerprint: row.bytes(0), completed: row.integer(1) == 1,
                        response: RecordedResponse(
                            status: Int(row.integer(2)),
                            headers: RecordedResponse.decodeHeaders(row.text(3) ?? ""),
                            body: row.bytes(4)),
                        createdAt: row.integer(5), ran: row.integer(6) == 1
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
                    UPDATE idempotency_keys SET fingerprint = \(fingerprint), completed = \(raw: Dialect.falseLiteral.text), ran = \(raw: Dialect.falseLiteral.text),
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
                UPDATE idempotency_keys SET completed = \(raw: Dialect.trueLiteral.text), status = \(Int64(response.status)),
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
