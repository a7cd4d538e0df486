/// The refresh-token table and statements, the same on SQLite and PostgreSQL.
struct RefreshSQL: Sendable {
    /// The schema, with the driver's types for keys (`TEXT`; PostgreSQL's `text COLLATE "C"`)
    /// and hashes (`BLOB`; `bytea`). A refresh token belongs to its session's row in `tokens`
    /// (`ON DELETE CASCADE`): ending a session ends its family on every path that ends one.
    /// `tokens.refresh_expires_at` is set on sessions that refresh: the live refresh token's
    /// expiry (the session lives while either token does).
    static func schema(key: String, hash: String) -> String {
        """
        ALTER TABLE tokens ADD COLUMN refresh_expires_at BIGINT;
        CREATE TABLE refresh_tokens (
            secret_hash \(hash) PRIMARY KEY,
            token_id \(key) NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            rotated_at BIGINT
        );
        CREATE INDEX refresh_tokens_by_session ON refresh_tokens (token_id, rotated_at);
        """
    }

    static let columns = "r.secret_hash, r.token_id, r.created_at, r.expires_at, r.rotated_at"

    static func record(_ row: some DatabaseRow) -> RefreshTokenRecord {
        RefreshTokenRecord(
            secretHash: row.bytes(0), tokenId: row.text(1) ?? "", createdAt: row.integer(2),
            expiresAt: row.integer(3), rotatedAt: row.isNull(4) ? nil : row.integer(4))
    }

    static func insert(_ connection: some SQLRunning, _ refresh: RefreshTokenRecord) throws {
        try connection.run(
            """
            INSERT INTO refresh_tokens (secret_hash, token_id, created_at, expires_at, rotated_at)
            VALUES (\(refresh.secretHash), \(refresh.tokenId), \(refresh.createdAt), \(refresh.expiresAt), \(refresh.rotatedAt))
            """)
    }

    static func lookup(_ connection: some SQLRunning, secretHash: [UInt8]) throws -> RefreshLookup? {
        try connection.first(
            """
            SELECT \(raw: columns), t.user_guid FROM refresh_tokens r JOIN tokens t ON t.id = r.token_id
            WHERE r.secret_hash = \(secretHash)
            """
        ) { RefreshLookup(refresh: record($0), userGuid: $0.text(5) ?? "") }
    }

    /// The exchange; the caller holds the user's sessions lock.
    static func rotate(_ connection: some SQLRunning, _ rotation: RefreshRotation) throws -> RefreshOutcome {
        guard let found = try lookup(connection, secretHash: rotation.presentedHash),
            found.userGuid == rotation.userGuid
        else { return .unknown }
        let session = found.refresh.tokenId
        if found.refresh.rotatedAt != nil {
            // Theft detection (OAuth 2.0 Security BCP): a dead token came back, so someone holds
            // a copy; every token of the family dies, the thief's and the owner's.
            try connection.run("DELETE FROM tokens WHERE id = \(session)")
            return .reused(tokenId: session)
        }
        guard found.refresh.expiresAt > rotation.now else {
            try connection.run("DELETE FROM tokens WHERE id = \(session)")
            return .expired
        }
        let exchanged = try connection.run(
            """
            UPDATE refresh_tokens SET rotated_at = \(rotation.now)
            WHERE secret_hash = \(rotation.presentedHash) AND rotated_at IS NULL
            """)
        // The lock makes this the only exchange of the token in flight; were it not, the loser
        // must not keep a pair.
        guard exchanged == 1 else { throw StoreError.versionChanged }
        let updated = try connection.run(
            """
            UPDATE tokens SET secret_hash = \(rotation.accessHash), expires_at = \(rotation.accessExpiresAt),
            renewed_at = \(rotation.now), refresh_expires_at = \(rotation.next.expiresAt) WHERE id = \(session)
            """)
        guard updated == 1 else { throw StoreError.versionChanged }
        var next = rotation.next
        next.tokenId = session
        try insert(connection, next)
        // Exchanged tokens are kept for reuse detection until they expire, and at most
        // `keptRotated` of them.
        try connection.run(
            """
            DELETE FROM refresh_tokens WHERE token_id = \(session) AND rotated_at IS NOT NULL
            AND (expires_at <= \(rotation.now) OR secret_hash NOT IN (SELECT secret_hash FROM refresh_tokens
            WHERE token_id = \(session) AND rotated_at IS NOT NULL ORDER BY rotated_at DESC, created_at DESC
            LIMIT \(Int64(rotation.keptRotated))))
            """)
        return try TokenSQL.row(connection, id: session).map(RefreshOutcome.rotated) ?? .unknown
    }
}
