/// ``ChangeLog`` written once: triggers on `objects` and `tokens` (each driver's own) append to
/// `changes` in the write's own transaction, so every write path is logged without a line of
/// Swift and none can skip the log. The store reads, bounds and trims it.
public final class SQLChangeLog<Database: SQLDatabase>: ChangeLog {
    let database: Database
    private let commits: @Sendable (@escaping @Sendable () -> Void) -> Void

    /// `observeCommits` registers an observer of the commits that may have appended entries:
    /// the writer's own, or another instance's as the driver hears of them.
    public init(
        database: Database, observeCommits: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.database = database
        commits = observeCommits
    }

    public func changes(after sequence: Int64, limit: Int, maxBytes: Int) async throws -> [Change] {
        try await database.pointRead { connection in
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
        try await database.pointRead { connection in
            try connection.first(
                "SELECT (SELECT min(seq) FROM changes), \(raw: Database.Connection.Dialect.lastChangeSequence)"
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
            let boundary = try SQLScriptOutbox<Database>.statements.pinnedBoundary(
                connection, allowed: allowed,
                forced: retention.forcedBoundary(oldest: oldest, last: last, now: now))
            return try connection.run("DELETE FROM changes WHERE seq <= \(boundary)")
        }
    }

    public func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        commits(observer)
    }
}
