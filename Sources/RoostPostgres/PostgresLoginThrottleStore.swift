import RoostStore
import Synchronization

/// The login throttle's failure times in PostgreSQL, so that every instance on the database
/// counts the same failures: one row per key (an account or an address) with its recent times,
/// updated by an atomic upsert. Rows whose failures have all expired are deleted now and then.
public final class PostgresLoginThrottleStore: LoginFailureStore {

    /// Milliseconds between two sweeps of expired rows by this instance.
    public static let sweepInterval: Int64 = 60_000

    private let database: PostgresDatabase
    /// When this instance last swept expired rows (milliseconds).
    private let lastSweep = Mutex<Int64?>(nil)

    public init(database: PostgresDatabase) {
        self.database = database
    }

    public func failures(of keys: [String], after since: Int64) async throws -> [String: [Int64]] {
        guard !keys.isEmpty else { return [:] }
        let list = SQL.joined(keys.map { key -> SQL in "\(key)" }, separator: ", ")
        let rows = try await database.read { connection in
            try connection.query(
                """
                SELECT f.key, t FROM roost_login_failures f, unnest(f.times) t
                WHERE f.key IN (\(list)) AND t > \(since) ORDER BY f.key, t
                """
            ) { (key: $0.text(0) ?? "", time: $0.integer(1)) }
        }
        return Dictionary(grouping: rows, by: \.key).mapValues { $0.map(\.time) }
    }

    public func recordFailure(of keys: [String], at now: Int64, droppingThrough since: Int64) async throws {
        let sweep = lastSweep.withLock { last in
            if let last, now >= last, now - last < Self.sweepInterval { return false }
            last = now
            return true
        }
        try await database.write { connection in
            // Keys in the order given (account before address), so two instances never wait on
            // each other's rows in opposite orders.
            for key in keys {
                try connection.run(
                    """
                    INSERT INTO roost_login_failures AS f (key, times, last_failure) VALUES (\(key), ARRAY[\(now)], \(now))
                    ON CONFLICT (key) DO UPDATE SET
                        times = ARRAY(SELECT t FROM unnest(f.times) t WHERE t > \(since) ORDER BY t) || excluded.times,
                        last_failure = greatest(f.last_failure, excluded.last_failure)
                    """)
            }
            if sweep {
                // Not `since`: other callers count longer windows in the same table.
                try connection.run(
                    "DELETE FROM roost_login_failures WHERE last_failure <= \(now - loginFailureRetention)")
            }
        }
    }

    public func forget(_ key: String) async throws {
        _ = try await database.write { try $0.run("DELETE FROM roost_login_failures WHERE key = \(key)") }
    }

    /// Keys with a row, for tests of the sweep.
    func storedKeys() async throws -> [String] {
        try await database.read {
            try $0.query("SELECT key FROM roost_login_failures ORDER BY key") { $0.text(0) ?? "" }
        }
    }
}
