/// The outbox's statements, the same on SQLite and PostgreSQL; `clock` is the database's
/// wall-clock milliseconds as an SQL expression.
public struct ScriptOutboxSQL: Sendable {
    let clock: String

    public init(clock: String) {
        self.clock = clock
    }

    /// The tables, after the change log's: the cursor starts at the log's end (an upgraded
    /// server does not run new handlers on old events). `start` is the log's last sequence.
    public static func schema(start: String) -> String {
        """
        CREATE TABLE script_outbox (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            dispatched_through BIGINT NOT NULL,
            holder TEXT,
            lease_until BIGINT NOT NULL DEFAULT 0
        );
        INSERT INTO script_outbox (id, dispatched_through) SELECT 1, \(start);
        CREATE TABLE script_outbox_subscriptions (
            handler TEXT NOT NULL,
            collection TEXT NOT NULL,
            operation TEXT NOT NULL,
            PRIMARY KEY (handler, collection, operation)
        );
        CREATE TABLE script_failures (
            seq BIGINT NOT NULL,
            handler TEXT NOT NULL,
            collection TEXT NOT NULL,
            guid TEXT NOT NULL,
            operation TEXT NOT NULL,
            version BIGINT NOT NULL,
            at BIGINT NOT NULL,
            document TEXT,
            acl TEXT,
            previous_document TEXT,
            previous_acl TEXT,
            attempts INTEGER NOT NULL,
            error TEXT NOT NULL,
            next_attempt BIGINT,
            state TEXT NOT NULL,
            trimmed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (seq, handler)
        );
        CREATE INDEX script_failures_due ON script_failures (state, next_attempt);
        """
    }

    /// Lets the pruning of old given-up runs find the newest ones without sorting them all.
    public static let givenUpIndex =
        "CREATE INDEX script_failures_by_state_seq ON script_failures (state, seq)"

    /// A failed run keeps its change whole, with who deleted the object (``Change/deletedBy``).
    public static let deleterColumn = "ALTER TABLE script_failures ADD COLUMN actor TEXT"

    private static let failureColumns =
        ChangeReader.columns + ", handler, attempts, error, next_attempt, trimmed"

    public func dispatchedThrough(_ connection: some SQLRunning) throws -> Int64 {
        try connection.first("SELECT dispatched_through FROM script_outbox WHERE id = 1") { $0.integer(0) }
            ?? 0
    }

    public func claim(_ connection: some SQLRunning, holder: String, for duration: Duration) throws -> Bool {
        try connection.run(
            """
            UPDATE script_outbox SET holder = \(holder), lease_until = \(raw: clock) + \(milliseconds(duration))
            WHERE id = 1 AND (holder = \(holder) OR lease_until <= \(raw: clock))
            """) == 1
    }

    public func release(_ connection: some SQLRunning, holder: String) throws {
        try connection.run(
            "UPDATE script_outbox SET holder = NULL, lease_until = 0 WHERE id = 1 AND holder = \(holder)")
    }

    public func setSubscriptions(_ connection: some SQLRunning, _ subscriptions: Set<OutboxSubscription>)
        throws
    {
        try connection.run("DELETE FROM script_outbox_subscriptions")
        for subscription in subscriptions {
            try connection.run(
                """
                INSERT INTO script_outbox_subscriptions (handler, collection, operation)
                VALUES (\(subscription.handler), \(subscription.collection), \(subscription.operation.rawValue))
                """)
        }
    }

    public func subscriptions(_ connection: some SQLRunning) throws -> Set<OutboxSubscription> {
        Set(
            try connection.query("SELECT handler, collection, operation FROM script_outbox_subscriptions") {
                row in
                OutboxSubscription(
                    handler: row.text(0) ?? "", collection: row.text(1) ?? "",
                    operation: Change.Operation(rawValue: row.text(2) ?? "") ?? .update)
            })
    }

    public func complete(
        _ connection: some SQLRunning, through sequence: Int64, failures: [RunFailure], holder: String,
        lease: Duration, keepingGivenUp keep: Int
    ) throws -> Bool {
        let held = try connection.run(
            """
            UPDATE script_outbox SET lease_until = \(raw: clock) + \(milliseconds(lease)),
            dispatched_through = CASE WHEN dispatched_through < \(sequence) THEN \(sequence) ELSE dispatched_through END
            WHERE id = 1 AND holder = \(holder)
            """)
        guard held == 1 else { return false }
        for failure in failures {
            // The event's copy comes from the log, where it still is: the cursor has not passed it.
            try connection.run(
                """
                INSERT INTO script_failures (\(raw: ChangeReader.columns), handler, attempts, error, next_attempt,
                    state, trimmed)
                SELECT \(raw: ChangeReader.columns), \(failure.handler), \(failure.attempts), \(failure.error),
                    CAST(\(failure.nextAttempt.map(DatabaseValue.integer) ?? .null) AS BIGINT), \(state(of: failure)), 0
                FROM changes WHERE seq = \(failure.sequence)
                ON CONFLICT (seq, handler) DO UPDATE SET attempts = excluded.attempts, error = excluded.error,
                    next_attempt = excluded.next_attempt, state = excluded.state
                """)
        }
        if failures.contains(where: { $0.nextAttempt == nil }) {
            try dropOldGivenUp(connection, keeping: keep)
        }
        return true
    }

    /// Deletes the oldest runs given up beyond about `keep` (events with several handlers may
    /// keep a few more).
    func dropOldGivenUp(_ connection: some SQLRunning, keeping keep: Int) throws {
        try connection.run(
            """
            DELETE FROM script_failures WHERE state = 'failed' AND seq < (
                SELECT seq FROM script_failures WHERE state = 'failed'
                ORDER BY seq DESC LIMIT 1 OFFSET \(Int64(max(keep, 1) - 1)))
            """)
    }

    public func retried(
        _ connection: some SQLRunning, sequence: Int64, handler: String, failure: RunFailure?, holder: String,
        keepingGivenUp keep: Int
    ) throws -> Bool {
        guard try holds(connection, holder) else { return false }
        if let failure {
            try connection.run(
                """
                UPDATE script_failures SET attempts = \(failure.attempts), error = \(failure.error),
                next_attempt = CAST(\(failure.nextAttempt.map(DatabaseValue.integer) ?? .null) AS BIGINT), state = \(state(of: failure))
                WHERE seq = \(sequence) AND handler = \(handler)
                """)
            if failure.nextAttempt == nil { try dropOldGivenUp(connection, keeping: keep) }
        } else {
            try connection.run("DELETE FROM script_failures WHERE seq = \(sequence) AND handler = \(handler)")
        }
        return true
    }

    public func failedRuns(_ connection: some SQLRunning, limit: Int) throws -> [FailedRun] {
        try connection.query(
            "SELECT \(raw: Self.failureColumns) FROM script_failures ORDER BY seq, handler LIMIT \(Int64(limit))",
            Self.failedRun)
    }

    public func dueRetries(_ connection: some SQLRunning, now: Int64, limit: Int) throws -> [FailedRun] {
        try connection.query(
            """
            SELECT \(raw: Self.failureColumns) FROM script_failures
            WHERE state = 'pending' AND next_attempt <= \(now) ORDER BY next_attempt, seq, handler LIMIT \(Int64(limit))
            """, Self.failedRun)
    }

    public func requeue(_ connection: some SQLRunning, events: [String]?, now: Int64) throws -> Int {
        let requeue: SQL = "UPDATE script_failures SET state = 'pending', attempts = 0, next_attempt = \(now)"
        guard let events else { return try connection.run(requeue + " WHERE trimmed = 0") }
        var count = 0
        for event in Set(events) {
            guard let (collection, sequence) = ScriptOutbox.parseEventID(event) else { continue }
            count += try connection.run(
                requeue + " WHERE trimmed = 0 AND seq = \(sequence) AND collection = \(collection)")
        }
        return count
    }

    /// Called by the change log's trim, in its transaction, with the boundary its retention
    /// allows and the one the hard cap forces: while ASYNC handlers are recorded, nothing past
    /// the cursor goes unless the cap forces it, and then the events those handlers would have
    /// run are recorded as failed for good ("trimmed") and the cursor moves past them.
    public func pinnedBoundary(_ connection: some SQLRunning, allowed: Int64, forced: Int64?) throws -> Int64
    {
        let pinned =
            try connection.first("SELECT 1 FROM script_outbox_subscriptions LIMIT 1") { _ in true } ?? false
        guard pinned else { return allowed }
        let cursor = try dispatchedThrough(connection)
        let boundary = min(allowed, max(cursor, forced ?? 0))
        guard boundary > cursor else { return boundary }
        // ACL-only updates run no handler (see the dispatcher), so they are not lost either.
        try connection.run(
            """
            INSERT INTO script_failures (seq, collection, guid, operation, version, at, handler, attempts, error,
                next_attempt, state, trimmed)
            SELECT c.seq, c.collection, c.guid, c.operation, c.version, c.at, s.handler, 0,
                \(ScriptOutbox.trimmedError), NULL, 'failed', 1
            FROM changes c JOIN script_outbox_subscriptions s ON s.collection = c.collection AND s.operation = c.operation
            WHERE c.seq > \(cursor) AND c.seq <= \(boundary)
                AND (c.operation <> 'update' OR c.document <> c.previous_document)
            ON CONFLICT (seq, handler) DO NOTHING
            """)
        try dropOldGivenUp(connection, keeping: ScriptOutbox.givenUpRunsKept)
        try connection.run("UPDATE script_outbox SET dispatched_through = \(boundary) WHERE id = 1")
        return boundary
    }

    private func holds(_ connection: some SQLRunning, _ holder: String) throws -> Bool {
        try connection.first("SELECT 1 FROM script_outbox WHERE id = 1 AND holder = \(holder)") { _ in true }
            ?? false
    }

    private func state(of failure: RunFailure) -> String {
        (failure.nextAttempt == nil ? FailedRun.State.failedForGood : .pendingRetry).rawValue
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    private static func failedRun(_ row: some DatabaseRow) -> FailedRun {
        var reader = ChangeReader(maxBytes: .max)
        let change = reader.take(row)!
        let next = ChangeReader.columnCount
        return FailedRun(
            change: change, handler: row.text(next) ?? "", attempts: Int(row.integer(next + 1)),
            error: row.text(next + 2) ?? "",
            nextAttempt: row.isNull(next + 3) ? nil : row.integer(next + 3),
            trimmed: row.integer(next + 4) != 0)
    }
}
