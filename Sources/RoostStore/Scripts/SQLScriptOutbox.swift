/// ``ScriptOutboxStore`` written once, beside the change log it dispatches. With several
/// instances on one database, the lease, timed by the database's clock, lets one of them
/// dispatch at a time.
public final class SQLScriptOutbox<Database: SQLDatabase>: ScriptOutboxStore {
    let database: Database

    static var statements: ScriptOutboxSQL { ScriptOutboxSQL(clock: Database.Connection.Dialect.clock) }

    public init(database: Database) {
        self.database = database
    }

    public func dispatchedThrough() async throws -> Int64 {
        try await database.pointRead { try Self.statements.dispatchedThrough($0) }
    }

    public func claimLease(holder: String, for duration: Duration) async throws -> Bool {
        try await database.write { try Self.statements.claim($0, holder: holder, for: duration) }
    }

    public func releaseLease(holder: String) async throws {
        try await database.write { try Self.statements.release($0, holder: holder) }
    }

    public func setSubscriptions(_ subscriptions: Set<OutboxSubscription>) async throws {
        try await database.write { try Self.statements.setSubscriptions($0, subscriptions) }
    }

    public func subscriptions() async throws -> Set<OutboxSubscription> {
        try await database.pointRead { try Self.statements.subscriptions($0) }
    }

    public func complete(
        through sequence: Int64, failures: [RunFailure], holder: String, lease: Duration, keepingGivenUp: Int
    ) async throws -> Bool {
        try await database.write {
            try Self.statements.complete(
                $0, through: sequence, failures: failures, holder: holder, lease: lease,
                keepingGivenUp: keepingGivenUp)
        }
    }

    public func retried(
        sequence: Int64, handler: String, failure: RunFailure?, holder: String, keepingGivenUp: Int
    ) async throws -> Bool {
        try await database.write {
            try Self.statements.retried(
                $0, sequence: sequence, handler: handler, failure: failure, holder: holder,
                keepingGivenUp: keepingGivenUp)
        }
    }

    public func failedRuns(limit: Int) async throws -> [FailedRun] {
        try await database.pointRead { try Self.statements.failedRuns($0, limit: limit) }
    }

    public func dueRetries(now: Int64, limit: Int) async throws -> [FailedRun] {
        try await database.pointRead { try Self.statements.dueRetries($0, now: now, limit: limit) }
    }

    public func requeue(events: [String]?, now: Int64) async throws -> Int {
        try await database.write { try Self.statements.requeue($0, events: events, now: now) }
    }
}
