/// ``IdentityStore`` written once for both drivers, on the database that holds the accounts.
public final class SQLIdentityStore<Database: SQLDatabase>: IdentityStore {
    public typealias Connection = Database.Connection
    let database: Database
    let collections: AccountCollections

    /// The tables, for each driver's migrations: `key` and `hash` are its types for a name and a
    /// SHA-256. An identity goes with its account (`ON DELETE CASCADE`); an account has at most
    /// one identity per provider.
    public static func schema(key: String, hash: String) -> String {
        """
        CREATE TABLE identities (
            provider \(key) NOT NULL,
            subject \(key) NOT NULL,
            user_guid \(key) NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
            email \(key),
            created_at BIGINT NOT NULL,
            PRIMARY KEY (provider, subject)
        );
        CREATE UNIQUE INDEX identities_by_user ON identities (user_guid, provider);
        CREATE TABLE identity_nonces (
            nonce_hash \(hash) PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX identity_nonces_by_expiry ON identity_nonces (expires_at);
        """
    }

    public init(database: Database, collections: AccountCollections) {
        self.database = database
        self.collections = collections
    }

    private static var columns: String { "user_guid, provider, subject, email, created_at" }

    private static func record(_ row: some DatabaseRow) -> IdentityRecord {
        IdentityRecord(
            userGuid: row.text(0) ?? "", provider: row.text(1) ?? "", subject: row.text(2) ?? "",
            email: row.text(3), createdAt: row.integer(4))
    }

    public func identity(provider: String, subject: String) async throws -> IdentityRecord? {
        try await database.pointRead { connection in
            try connection.first(
                """
                SELECT \(raw: Self.columns) FROM identities WHERE provider = \(provider) AND subject = \(subject)
                """, Self.record)
        }
    }

    public func identities(userGuid: String) async throws -> [IdentityRecord] {
        try await database.pointRead { connection in
            try connection.query(
                """
                SELECT \(raw: Self.columns) FROM identities WHERE user_guid = \(userGuid)
                ORDER BY created_at, provider
                """, Self.record)
        }
    }

    public func link(_ identity: IdentityRecord) async throws {
        try await database.write { connection in
            try connection.lock(.sessions, identity.userGuid)
            try Self.insert(identity, on: connection)
        }
    }

    public func linkClaimingAccount(_ identity: IdentityRecord) async throws {
        try await database.write { connection in
            try connection.lock(.sessions, identity.userGuid)
            try Self.insert(identity, on: connection)
            try connection.run(
                "UPDATE accounts SET password_hash = '' WHERE user_guid = \(identity.userGuid)")
            try connection.run("DELETE FROM tokens WHERE user_guid = \(identity.userGuid)")
        }
    }

    public func createAccount(_ account: AccountRecord, user: StoredObject, identity: IdentityRecord)
        async throws
    {
        let derived = try DerivedRows(of: user, collections: collections)
        try await database.write { connection in
            try SQLAccountStore<Database>.insertAccount(account, user: user, derived: derived, on: connection)
            try Self.insert(identity, on: connection)
        }
    }

    public func unlink(userGuid: String, provider: String) async throws -> IdentityRemoval {
        try await database.write { connection in
            // One change to the user's ways in at a time, so two unlinks cannot leave none.
            try connection.lock(.sessions, userGuid)
            let others = try connection.first(
                """
                SELECT (SELECT COUNT(*) FROM identities WHERE user_guid = \(userGuid) AND provider = \(provider)),
                (SELECT COUNT(*) FROM identities WHERE user_guid = \(userGuid) AND provider <> \(provider)),
                (SELECT COUNT(*) FROM accounts WHERE user_guid = \(userGuid) AND password_hash <> '')
                """
            ) { ($0.integer(0), $0.integer(1), $0.integer(2)) }
            guard let others, others.0 > 0 else { return .notFound }
            guard others.1 + others.2 > 0 else { return .lastSignInMethod }
            try connection.run(
                "DELETE FROM identities WHERE user_guid = \(userGuid) AND provider = \(provider)")
            return .removed
        }
    }

    public func claimNonce(_ nonceHash: [UInt8], expiresAt: Int64, now: Int64) async throws -> Bool {
        try await database.write { connection in
            try connection.run("DELETE FROM identity_nonces WHERE expires_at <= \(now)")
            return try connection.run(
                """
                INSERT INTO identity_nonces (nonce_hash, expires_at) VALUES (\(nonceHash), \(expiresAt))
                ON CONFLICT (nonce_hash) DO NOTHING
                """) == 1
        }
    }

    private static func insert(_ identity: IdentityRecord, on connection: Connection) throws {
        let existing = try connection.first(
            """
            SELECT CASE WHEN provider = \(identity.provider) AND subject = \(identity.subject) THEN 1 ELSE 0 END
            FROM identities WHERE (provider = \(identity.provider) AND subject = \(identity.subject))
            OR (user_guid = \(identity.userGuid) AND provider = \(identity.provider)) LIMIT 1
            """
        ) { $0.integer(0) }
        if let existing {
            throw existing == 1 ? IdentityConflict.subjectTaken : IdentityConflict.providerLinked
        }
        do {
            try connection.run(
                """
                INSERT INTO identities (provider, subject, user_guid, email, created_at)
                VALUES (\(identity.provider), \(identity.subject), \(identity.userGuid), \(identity.email), \(identity.createdAt))
                """)
        } catch let violated where Connection.isUniqueViolation(violated) {
            // Another instance linked it since the check (with several writers).
            let message = String(describing: violated)
            throw message.contains("user_guid") || message.contains("identities_by_user")
                ? IdentityConflict.providerLinked : IdentityConflict.subjectTaken
        }
    }
}
