/// ``MailStore`` written once for both drivers, beside the accounts whose password a reset sets.
public final class SQLMailStore<Database: SQLDatabase>: MailStore {
    let database: Database

    static var statements: MailSQL { MailSQL(clock: Database.Connection.Dialect.clock) }

    /// The tables, for each driver's migrations.
    public static var schema: String { MailSQL.schema }

    public init(database: Database) {
        self.database = database
    }

    public func enqueue(_ mail: OutboxMail, now: Int64) async throws {
        try await database.write { try Self.statements.enqueue($0, mail, now: now) }
    }

    public func requestPasswordReset(
        emailKey: String, tokenHash: String, expiresAt: Int64, mail: OutboxMail, now: Int64
    ) async throws -> Bool {
        try await database.write { connection in
            try Self.statements.requestPasswordReset(
                connection, emailKey: emailKey, tokenHash: tokenHash, expiresAt: expiresAt, mail: mail,
                now: now)
        }
    }

    public func passwordReset(tokenHash: String) async throws -> PasswordResetRecord? {
        try await database.pointRead { connection in
            try connection.first(
                "SELECT user_guid, expires_at FROM password_resets WHERE token_hash = \(tokenHash)"
            ) { row in PasswordResetRecord(userGuid: row.text(0) ?? "", expiresAt: row.integer(1)) }
        }
    }

    public func completePasswordReset(tokenHash: String, passwordHash: String, now: Int64) async throws
        -> String?
    {
        try await database.write { connection in
            // Ordered with the user's logins, as password changes are.
            if let reset = try connection.first(
                "SELECT user_guid FROM password_resets WHERE token_hash = \(tokenHash)", { $0.text(0) }),
                let user = reset
            {
                try connection.lock(.sessions, user)
            }
            return try Self.statements.completePasswordReset(
                connection, tokenHash: tokenHash, passwordHash: passwordHash, now: now)
        }
    }

    public func claimLease(holder: String, for duration: Duration) async throws -> Bool {
        try await database.write { try Self.statements.claim($0, holder: holder, for: duration) }
    }

    public func releaseLease(holder: String) async throws {
        try await database.write { try Self.statements.release($0, holder: holder) }
    }

    public func hasWork(now: Int64, instance: String) async throws -> Bool {
        try await database.pointRead { try Self.statements.hasWork($0, now: now, instance: instance) }
    }

    public func claimDue(now: Int64, limit: Int, holder: String, instance: String) async throws
        -> [MailDelivery]
    {
        try await database.write {
            try Self.statements.claimDue($0, now: now, limit: limit, holder: holder, instance: instance)
        }
    }

    public func record(_ outcome: MailRecordedOutcome, id: String, instance: String, now: Int64) async throws
    {
        try await database.write {
            try Self.statements.record($0, outcome, id: id, instance: instance, now: now)
        }
    }

    public func queueDepth() async throws -> Int {
        try await database.pointRead { connection in
            Int(
                try connection.first("SELECT count(*) FROM mail_outbox WHERE state IN ('pending', 'sending')")
                {
                    $0.integer(0)
                } ?? 0)
        }
    }

    public func prune(before cutoff: Int64) async throws {
        try await database.write { try Self.statements.prune($0, before: cutoff) }
    }

    public func statuses(limit: Int) async throws -> [MailStatus] {
        try await database.pointRead { try Self.statements.statuses($0, limit: limit) }
    }
}
