import Foundation
import RoostStore

/// ``IdempotencyStore`` on the Roost SQLite database.
public final class SQLiteIdempotencyStore: IdempotencyStore {
    let database: SQLiteDatabase

    static let migrations = [
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

    /// Inside an object write's transaction: the request's key is marked as run.
    static func markRun(_ mark: IdempotencyMark?, on connection: SQLiteConnection) throws {
        guard let mark else { return }
        try connection.run(
            "UPDATE idempotency_keys SET ran = 1 WHERE scope = \(mark.scope) AND key = \(mark.key)")
    }

    public init(database: SQLiteDatabase) {
        self.database = database
    }

    public func reserve(
        scope: String, key: String, fingerprint: [UInt8], now: Int64, expiredBefore: Int64,
        abandonedBefore: Int64
    ) async throws -> IdempotencyReservation {
        try await database.write { connection in
            let existing = try connection.first(
                """
                SELECT fingerprint, completed, status, headers, body, created_at, ran FROM idempotency_keys
                WHERE scope = \(scope) AND key = \(key)
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
            if let existing, existing.createdAt >= expiredBefore {
                if existing.fingerprint != fingerprint { return .mismatch }
                if existing.completed { return .completed(existing.response) }
                if existing.createdAt >= abandonedBefore { return .inProgress }
                if existing.ran { return .ranWithoutAnswer }
            }
            try connection.run(
                """
                INSERT INTO idempotency_keys (scope, key, fingerprint, created_at)
                VALUES (\(scope), \(key), \(fingerprint), \(now))
                ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, completed = 0, ran = 0,
                status = NULL, headers = NULL, body = NULL, created_at = excluded.created_at
                """)
            return .reserved
        }
    }

    public func complete(scope: String, key: String, response: RecordedResponse) async throws {
        let headers = RecordedResponse.encodeHeaders(response.headers)
        _ = try await database.write { connection in
            try connection.run(
                """
                UPDATE idempotency_keys SET completed = 1, status = \(Int64(response.status)),
                headers = \(headers), body = \(response.body) WHERE scope = \(scope) AND key = \(key)
                """)
        }
    }

    public func release(scope: String, key: String) async throws {
        _ = try await database.write { connection in
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
