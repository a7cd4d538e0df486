/// The mail tables and statements, the same on SQLite and PostgreSQL; `clock` is the database's
/// wall-clock milliseconds as an SQL expression (for the lease only: messages are timed by
/// Roost's clock, which tests control).
struct MailSQL: Sendable {
    let clock: String

    /// The outbox (one row per message, with its own outcome and retries), the dispatch lease,
    /// and the password-reset tokens, of which only a SHA-256 (hex) is stored.
    static let schema = """
        CREATE TABLE mail_outbox (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            recipient TEXT NOT NULL,
            message TEXT,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt BIGINT NOT NULL,
            claimed_by TEXT,
            uncertain INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE INDEX mail_outbox_due ON mail_outbox (state, next_attempt);
        CREATE INDEX mail_outbox_finished ON mail_outbox (state, updated_at);
        CREATE TABLE mail_dispatch (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            holder TEXT,
            lease_until BIGINT NOT NULL DEFAULT 0
        );
        INSERT INTO mail_dispatch (id) VALUES (1);
        CREATE TABLE password_resets (
            token_hash TEXT PRIMARY KEY,
            user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX password_resets_by_user ON password_resets (user_guid);
        CREATE INDEX password_resets_by_expiry ON password_resets (expires_at);
        """

    func enqueue(_ connection: some SQLRunning, _ mail: OutboxMail, now: Int64) throws {
        try connection.run(
            """
            INSERT INTO mail_outbox (id, kind, recipient, message, state, attempts, next_attempt, created_at, updated_at)
            VALUES (\(mail.id), \(mail.kind), \(mail.recipient), \(mail.message), 'pending', 0, \(now), \(now), \(now))
            """)
    }

    func requestPasswordReset(
        _ connection: some SQLRunning, emailKey: String, tokenHash: String, expiresAt: Int64,
        mail: OutboxMail,
        now: Int64
    ) throws -> Bool {
        guard
            let user = try connection.first(
                "SELECT user_guid FROM accounts WHERE email_key = \(emailKey) LIMIT 1", { $0.text(0) }),
            let user
        else { return false }
        try connection.run(
            """
            INSERT INTO password_resets (token_hash, user_guid, created_at, expires_at)
            VALUES (\(tokenHash), \(user), \(now), \(expiresAt))
            """)
        try enqueue(connection, mail, now: now)
        return true
    }

    func completePasswordReset(
        _ connection: some SQLRunning, tokenHash: String, passwordHash: String, now: Int64
    )
        throws -> String?
    {
        guard
            let user = try connection.first(
                "SELECT user_guid FROM password_resets WHERE token_hash = \(tokenHash) AND expires_at > \(now)",
                { $0.text(0) }),
            let user
        else { return nil }
        // Every reset of the user dies with this one: a second mail's link is no way back in.
        try connection.run("DELETE FROM password_resets WHERE user_guid = \(user)")
        try connection.run("UPDATE accounts SET password_hash = \(passwordHash) WHERE user_guid = \(user)")
        try connection.run("DELETE FROM tokens WHERE user_guid = \(user)")
        try connection.run("DELETE FROM email_tokens WHERE user_guid = \(user) AND purpose = 'change'")
        return user
    }

    func claim(_ connection: some SQLRunning, holder: String, for duration: Duration) throws -> Bool {
        try connection.run(
            """
            UPDATE mail_dispatch SET holder = \(holder), lease_until = \(raw: clock) + \(milliseconds(duration))
            WHERE id = 1 AND (holder = \(holder) OR lease_until <= \(raw: clock))
            """) == 1
    }

    func release(_ connection: some SQLRunning, holder: String) throws {
        try connection.run(
            "UPDATE mail_dispatch SET holder = NULL, lease_until = 0 WHERE id = 1 AND holder = \(holder)")
    }

    func hasWork(_ connection: some SQLRunning, now: Int64, instance: String) throws -> Bool {
        try connection.first(
            """
            SELECT 1 FROM mail_outbox WHERE (state = 'pending' AND next_attempt <= \(now))
            OR (state = 'sending' AND claimed_by <> \(instance)) LIMIT 1
            """
        ) { _ in true } ?? false
    }

    func claimDue(_ connection: some SQLRunning, now: Int64, limit: Int, holder: String, instance: String)
        throws -> [MailDelivery]
    {
        let held = try connection.first(
            "SELECT 1 FROM mail_dispatch WHERE id = 1 AND holder = \(holder)", { _ in true })
        guard held == true else { return [] }
        // Left in flight by a dispatcher that died (or lost the lease): its answer is unknown.
        try connection.run(
            """
            UPDATE mail_outbox SET state = 'pending', uncertain = 1, next_attempt = \(now)
            WHERE state = 'sending' AND claimed_by <> \(instance)
            """)
        let due = try connection.query(
            """
            SELECT id, kind, recipient, message, attempts, uncertain FROM mail_outbox
            WHERE state = 'pending' AND next_attempt <= \(now) ORDER BY next_attempt, id LIMIT \(Int64(limit))
            """
        ) { row in
            MailDelivery(
                id: row.text(0) ?? "", kind: row.text(1) ?? "", recipient: row.text(2) ?? "",
                message: row.text(3) ?? "", attempts: Int(row.integer(4)) + 1, uncertain: row.integer(5) != 0)
        }
        // In flight before the send: a crash leaves it 'sending', never lost.
        for delivery in due {
            try connection.run(
                """
                UPDATE mail_outbox SET state = 'sending', claimed_by = \(instance), attempts = attempts + 1,
                updated_at = \(now) WHERE id = \(delivery.id)
                """)
        }
        return due
    }

    func record(
        _ connection: some SQLRunning, _ outcome: MailRecordedOutcome, id: String, instance: String,
        now: Int64
    )
        throws
    {
        let state: String
        var next = now
        var error: String?
        switch outcome {
        case .delivered: state = "delivered"
        case .retry(let nextAttempt, let reason):
            state = nextAttempt == nil ? "failed" : "pending"
            next = nextAttempt ?? now
            error = reason
        case .rejected(let reason):
            state = "rejected"
            error = reason
        }
        // A finished message's text goes: it may hold a single-use link.
        let message = state == "pending" ? "message" : "NULL"
        try connection.run(
            """
            UPDATE mail_outbox SET state = \(state), next_attempt = \(next), error = \(error.map { String($0.prefix(1024)) }),
            message = \(raw: message), updated_at = \(now), claimed_by = NULL
            WHERE id = \(id) AND state = 'sending' AND claimed_by = \(instance)
            """)
    }

    func prune(_ connection: some SQLRunning, before cutoff: Int64) throws {
        try connection.run(
            """
            DELETE FROM mail_outbox WHERE state IN ('delivered', 'failed', 'rejected') AND updated_at < \(cutoff)
            """)
        try connection.run("DELETE FROM password_resets WHERE expires_at < \(cutoff)")
        try connection.run("DELETE FROM email_tokens WHERE expires_at < \(cutoff)")
    }

    func statuses(_ connection: some SQLRunning, limit: Int) throws -> [MailStatus] {
        try connection.query(
            """
            SELECT id, kind, state, attempts, error FROM mail_outbox ORDER BY created_at, id LIMIT \(Int64(limit))
            """
        ) { row in
            MailStatus(
                id: row.text(0) ?? "", kind: row.text(1) ?? "", state: row.text(2) ?? "",
                attempts: Int(row.integer(3)), error: row.text(4))
        }
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
