/// ``EmailTokenStore`` beside the accounts: confirming a token changes the account and its
/// `FFUser` object in one transaction.
extension SQLAccountStore: EmailTokenStore {
    /// Migration 34 (SQLite) and 84 (PostgreSQL): when an account's address was verified, and the
    /// tokens that verify or change it.
    public static var emailSchema: String {
        """
        ALTER TABLE accounts ADD COLUMN email_verified_at BIGINT;
        CREATE TABLE email_tokens (
            token_hash TEXT PRIMARY KEY,
            user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
            purpose TEXT NOT NULL,
            email TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX email_tokens_by_user ON email_tokens (user_guid);
        CREATE INDEX email_tokens_by_expiry ON email_tokens (expires_at);
        """
    }

    private static var mail: MailSQL { SQLMailStore<Database>.statements }

    public func requestVerification(
        emailKey: String, tokenHash: String, expiresAt: Int64, mail: OutboxMail, now: Int64
    ) async throws -> Bool {
        try await database.write { connection in
            guard
                let user = try connection.first(
                    """
                    SELECT user_guid FROM accounts WHERE email_key = \(emailKey) AND email_verified_at IS NULL
                    LIMIT 1
                    """, { $0.text(0) }),
                let user
            else { return false }
            try Self.insertToken(
                connection, tokenHash: tokenHash, user: user, purpose: .verify, email: emailKey, now: now,
                expiresAt: expiresAt)
            try Self.mail.enqueue(connection, mail, now: now)
            return true
        }
    }

    public func requestChange(
        userGuid: String, email: String, tokenHash: String, expiresAt: Int64, mails: [OutboxMail], now: Int64
    ) async throws {
        try await database.write { connection in
            try Self.insertToken(
                connection, tokenHash: tokenHash, user: userGuid, purpose: .change, email: email, now: now,
                expiresAt: expiresAt)
            for mail in mails { try Self.mail.enqueue(connection, mail, now: now) }
        }
    }

    public func emailToken(tokenHash: String) async throws -> EmailTokenRecord? {
        try await database.pointRead { connection in
            try connection.first(
                "SELECT user_guid, purpose, email, expires_at FROM email_tokens WHERE token_hash = \(tokenHash)"
            ) { row in
                EmailTokenPurpose(rawValue: row.text(1) ?? "").map {
                    EmailTokenRecord(
                        userGuid: row.text(0) ?? "", purpose: $0, email: row.text(2) ?? "",
                        expiresAt: row.integer(3))
                }
            } ?? nil
        }
    }

    public func confirm(_ confirmation: EmailConfirmation) async throws -> Bool {
        let derived = try DerivedRows(of: confirmation.user, collections: collections)
        return try await database.write { connection in
            try Self.confirm(confirmation, derived: derived, on: connection)
        }
    }

    private static func confirm(_ change: EmailConfirmation, derived: DerivedRows, on connection: Connection)
        throws -> Bool
    {
        let user = change.user.guid
        guard
            try connection.first(
                """
                SELECT 1 FROM email_tokens WHERE token_hash = \(change.tokenHash) AND user_guid = \(user)
                AND purpose = \(change.purpose.rawValue) AND expires_at > \(change.now)
                """, { _ in true }) == true
        else { return false }
        if change.purpose == .change {
            // Taken as another account's email or user name: logins by it would be ambiguous.
            let names = [change.emailKey, change.userNameKey].compactMap { $0 }
            for name in names {
                let taken = try connection.first(
                    """
                    SELECT 1 FROM accounts WHERE (email_key = \(name) OR user_name_key = \(name))
                    AND user_guid <> \(user) LIMIT 1
                    """, { _ in true })
                if taken == true { throw AccountConflict.email }
            }
            try connection.run("DELETE FROM email_tokens WHERE user_guid = \(user)")
            // A reset link mailed to the old address is no way back in.
            try connection.run("DELETE FROM password_resets WHERE user_guid = \(user)")
        } else {
            try connection.run("DELETE FROM email_tokens WHERE user_guid = \(user) AND purpose = 'verify'")
        }
        do {
            try connection.run(
                """
                UPDATE accounts SET email_key = \(change.emailKey),
                user_name_key = COALESCE(\(change.userNameKey), user_name_key), email_verified_at = \(change.now)
                WHERE user_guid = \(user)
                """)
        } catch let violated where Connection.isUniqueViolation(violated) {
            throw AccountConflict.email
        }
        let next = change.user
        let changed = try connection.run(
            """
            UPDATE objects SET document = \(Objects.text(next.document)), updated_by = \(next.updatedBy),
            updated_at = \(next.updatedAt), version = \(next.version)
            WHERE collection = \(next.collection) AND guid = \(user) AND version = \(change.expectedVersion)
            """)
        guard changed == 1 else { throw StoreError.versionChanged }
        try Objects.writeDerived(
            derived, collection: next.collection, guid: user, replacing: true, on: connection)
        return true
    }

    private static func insertToken(
        _ connection: Connection, tokenHash: String, user: String, purpose: EmailTokenPurpose, email: String,
        now: Int64, expiresAt: Int64
    ) throws {
        try connection.run(
            """
            INSERT INTO email_tokens (token_hash, user_guid, purpose, email, created_at, expires_at)
            VALUES (\(tokenHash), \(user), \(purpose.rawValue), \(email), \(now), \(expiresAt))
            """)
    }
}
