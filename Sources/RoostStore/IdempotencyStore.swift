/// A response kept for an `Idempotency-Key`, replayed when the same request comes again.
public struct RecordedResponse: Sendable, Equatable {
    public var status: Int
    /// Header lines worth replaying (content type, ETag, Location), as name/value pairs.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: RecordedResponse, rhs: RecordedResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }
}

/// The `Idempotency-Key` of the request a write runs for. Object writes mark the key as run
/// inside their own transaction, so a crash between that commit and the recording of the answer
/// cannot let the write run twice.
public struct IdempotencyMark: Sendable, Equatable {
    public let scope: String
    public let key: String

    public init(scope: String, key: String) {
        self.scope = scope
        self.key = key
    }
}

/// What a reservation of a key found.
public enum IdempotencyReservation: Sendable, Equatable {
    /// The key is new (or expired, or abandoned by a crash): run the request.
    case reserved
    /// The request ran before; here is its response.
    case completed(RecordedResponse)
    /// The same key is being run by another request right now.
    case inProgress
    /// The key was used for a different request.
    case mismatch
    /// The request's write committed, but its process died before the answer was recorded.
    case ranWithoutAnswer
}

/// Keys of idempotent writes, per caller.
public protocol IdempotencyStore: Sendable {
    /// Claims `key` for one run of the request with this fingerprint. Entries created before
    /// `expiredBefore` are forgotten; a run still pending since before `abandonedBefore` is taken
    /// to have died with its process.
    func reserve(
        scope: String, key: String, fingerprint: [UInt8], now: Int64, expiredBefore: Int64,
        abandonedBefore: Int64
    ) async throws -> IdempotencyReservation
    /// Records the response of a reserved run.
    func complete(scope: String, key: String, response: RecordedResponse) async throws
    /// Forgets a reserved run that failed in a way worth retrying (a 5xx).
    func release(scope: String, key: String) async throws
    /// Removes entries created before `cutoff`; returns how many.
    @discardableResult
    func purge(createdBefore cutoff: Int64) async throws -> Int
}

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
                        status: Int(row.integer(2)), headers: Self.decodeHeaders(row.text(3) ?? ""),
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
        let headers = Self.encodeHeaders(response.headers)
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

    // Header names and values never hold a newline (the HTTP parser refuses them), so one line a
    // header is unambiguous.
    public static func encodeHeaders(_ headers: [(String, String)]) -> String {
        headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
    }

    public static func decodeHeaders(_ text: String) -> [(String, String)] {
        text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst()))
        }
    }
}
