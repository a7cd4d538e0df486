import RoostStore

/// ``AccountStore`` on the same SQLite database as the objects.
public final class SQLiteAccountStore: AccountStore {
    let database: SQLiteDatabase

    static let migrations = [
        Migration(
            version: 2, name: "accounts",
            sql: """
                CREATE TABLE accounts (
                    user_guid TEXT PRIMARY KEY,
                    user_name_key TEXT NOT NULL UNIQUE,
                    email_key TEXT UNIQUE,
                    password_hash TEXT NOT NULL
                );
                CREATE TABLE tokens (
                    id TEXT PRIMARY KEY,
                    user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
                    secret_hash BLOB NOT NULL UNIQUE,
                    device_id TEXT NOT NULL,
                    device_type TEXT,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    renewed_at INTEGER NOT NULL
                );
                CREATE INDEX tokens_by_user ON tokens (user_guid, device_id);
                CREATE TABLE devices (
                    user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    device_type TEXT,
                    manufacturer_id TEXT,
                    last_seen_at INTEGER NOT NULL,
                    PRIMARY KEY (user_guid, device_id)
                );
                """),
        // Deactivating a user (`active: false` on the FFUser object) deletes their tokens in the
        // same write, so reactivation never revives a stolen one. A trigger, so that every write
        // path that changes the object does it.
        Migration(
            version: 21, name: "deactivation revokes tokens",
            sql: """
                CREATE TRIGGER deactivation_revokes_tokens AFTER UPDATE OF document ON objects
                WHEN new.collection = 'FFUser' AND json_type(new.document, '$.active') = 'false'
                BEGIN DELETE FROM tokens WHERE user_guid = new.guid; END;
                """),
        // A deleted group's guid is never a group again: rules and access lists that name it must
        // not fall to whoever creates it next. The delete writes the tombstone in its transaction;
        // an insert of a retired guid fails as a duplicate would.
        Migration(
            version: 22, name: "retired group guids",
            sql: """
                CREATE TABLE retired_group_guids (guid TEXT PRIMARY KEY) WITHOUT ROWID;
                CREATE TRIGGER group_delete_retires_guid AFTER DELETE ON objects
                WHEN old.collection = 'FFUserGroup'
                BEGIN INSERT OR IGNORE INTO retired_group_guids (guid) VALUES (old.guid); END;
                CREATE TRIGGER retired_group_guid_stays_retired BEFORE INSERT ON objects
                WHEN new.collection = 'FFUserGroup'
                BEGIN INSERT INTO retired_group_guids (guid)
                SELECT new.guid WHERE new.guid IN (SELECT guid FROM retired_group_guids); END;
                """),
        // Sessions say where they logged in from (the forwarded client behind trusted proxies).
        Migration(
            version: 23, name: "session client addresses",
            sql: "ALTER TABLE tokens ADD COLUMN client_address TEXT;"),
    ]

    public init(database: SQLiteDatabase) {
        self.database = database
    }

    private static let accountColumns = "user_guid, user_name_key, email_key, password_hash"
    private static let tokenColumns =
        "id, user_guid, secret_hash, device_id, device_type, created_at, expires_at, renewed_at, client_address"

    private static func account(_ row: Row) -> AccountRecord {
        AccountRecord(
            userGuid: row.text(0) ?? "", userNameKey: row.text(1) ?? "", emailKey: row.text(2),
            passwordHash: row.text(3) ?? "")
    }

    private static func token(_ row: Row) -> TokenRecord {
        TokenRecord(
            id: row.text(0) ?? "", userGuid: row.text(1) ?? "", secretHash: row.bytes(2),
            deviceId: row.text(3) ?? "",
            deviceType: row.text(4), createdAt: row.integer(5), expiresAt: row.integer(6),
            renewedAt: row.integer(7), clientAddress: row.text(8))
    }

    public func createAccount(_ account: AccountRecord, user: StoredObject) async throws {
        let derived = DerivedRows(of: user)
        try await database.write { connection in
            let taken = try connection.first(
                """
                SELECT user_name_key = \(account.userNameKey) FROM accounts
                WHERE user_name_key = \(account.userNameKey) OR email_key = \(account.emailKey) LIMIT 1
                """
            ) { $0.integer(0) }
            if let taken { throw taken == 1 ? AccountConflict.userName : AccountConflict.email }
            try connection.run(
                """
                INSERT INTO accounts (user_guid, user_name_key, email_key, password_hash)
                VALUES (\(account.userGuid), \(account.userNameKey), \(account.emailKey), \(account.passwordHash))
                """)
            try SQLiteObjectStore.insert(user, derived: derived, on: connection)
        }
    }

    public func account(identifiedBy key: String) async throws -> AccountRecord? {
        try database.read { connection in
            try connection.first(
                "SELECT \(raw: Self.accountColumns) FROM accounts WHERE user_name_key = \(key) OR email_key = \(key) LIMIT 1",
                Self.account)
        }
    }

    public func account(userGuid: String) async throws -> AccountRecord? {
        try database.read { connection in
            try connection.first(
                "SELECT \(raw: Self.accountColumns) FROM accounts WHERE user_guid = \(userGuid)", Self.account
            )
        }
    }

    public func updatePasswordHash(userGuid: String, hash: String, revoking: TokenCleanup) async throws {
        try await database.write { connection in
            try connection.run("UPDATE accounts SET password_hash = \(hash) WHERE user_guid = \(userGuid)")
            switch revoking {
            case .none: break
            case .allExcept(let tokenId):
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid) AND id != \(tokenId)")
            case .all:
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid)")
            }
        }
    }

    public func deleteAccount(userGuid: String) async throws -> Bool {
        try await database.write { connection in
            let deleted = try connection.run("DELETE FROM accounts WHERE user_guid = \(userGuid)") > 0
            try connection.run("DELETE FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)")
            try SQLiteObjectStore.removeDerived(collection: "FFUser", guid: userGuid, on: connection)
            return deleted
        }
    }

    public func issue(_ token: TokenRecord, revoking revocation: TokenRevocation, manufacturerId: String?)
        async throws
    {
        try await database.write { connection in
            switch revocation {
            case .none: break
            case .sameDevice:
                try connection.run(
                    "DELETE FROM tokens WHERE user_guid = \(token.userGuid) AND device_id = \(token.deviceId)"
                )
            case .allDevices:
                try connection.run("DELETE FROM tokens WHERE user_guid = \(token.userGuid)")
            case .sameDeviceBeyond(let kept):
                try connection.run(
                    """
                    DELETE FROM tokens WHERE user_guid = \(token.userGuid) AND device_id = \(token.deviceId)
                    AND id NOT IN (SELECT id FROM tokens WHERE user_guid = \(token.userGuid) AND device_id = \(token.deviceId)
                    ORDER BY created_at DESC, rowid DESC LIMIT \(Int64(kept)))
                    """)
            }
            try connection.run(
                """
                INSERT INTO tokens (\(raw: Self.tokenColumns)) VALUES (\(token.id), \(token.userGuid), \(token.secretHash),
                \(token.deviceId), \(token.deviceType), \(token.createdAt), \(token.expiresAt), \(token.renewedAt),
                \(token.clientAddress))
                """)
            try connection.run(
                """
                INSERT INTO devices (user_guid, device_id, device_type, manufacturer_id, last_seen_at)
                VALUES (\(token.userGuid), \(token.deviceId), \(token.deviceType), \(manufacturerId), \(token.createdAt))
                ON CONFLICT (user_guid, device_id) DO UPDATE SET
                device_type = coalesce(excluded.device_type, device_type),
                manufacturer_id = coalesce(excluded.manufacturer_id, manufacturer_id),
                last_seen_at = excluded.last_seen_at
                """)
        }
    }

    public func token(secretHash: [UInt8]) async throws -> TokenRecord? {
        try database.read { connection in
            try connection.first(
                "SELECT \(raw: Self.tokenColumns) FROM tokens WHERE secret_hash = \(secretHash)", Self.token)
        }
    }

    public func token(id: String) async throws -> TokenRecord? {
        try database.read { connection in
            try connection.first("SELECT \(raw: Self.tokenColumns) FROM tokens WHERE id = \(id)", Self.token)
        }
    }

    public func tokens(userGuid: String) async throws -> [TokenRecord] {
        try database.read { connection in
            try connection.query(
                "SELECT \(raw: Self.tokenColumns) FROM tokens WHERE user_guid = \(userGuid) ORDER BY created_at DESC, id",
                Self.token)
        }
    }

    @discardableResult
    public func deleteToken(id: String) async throws -> Bool {
        try await database.write { connection in
            try connection.run("DELETE FROM tokens WHERE id = \(id)") > 0
        }
    }

    public func renewToken(id: String, expiresAt: Int64, renewedAt: Int64) async throws {
        _ = try await database.write { connection in
            try connection.run(
                "UPDATE tokens SET expires_at = \(expiresAt), renewed_at = \(renewedAt) WHERE id = \(id)")
        }
    }

    public func ensureGroups(_ groups: [StoredObject]) async throws -> [String] {
        guard !groups.isEmpty else { return [] }
        let derived = groups.map(DerivedRows.init(of:))
        return try await database.write { connection in
            var replaced: [String] = []
            for (group, rows) in zip(groups, derived) {
                if let existing = try SQLiteObjectStore.object(
                    in: group.collection, guid: group.guid, on: connection)
                {
                    // The system's, or an administrator's: adopted as it is, members and all.
                    guard let creator = existing.createdBy, try !Self.isAdmin(creator, on: connection) else {
                        continue
                    }
                    // Claimed by a user before the app declared it: squatted, so replaced.
                    try connection.run(
                        "DELETE FROM objects WHERE collection = \(group.collection) AND guid = \(group.guid)")
                    try SQLiteObjectStore.removeDerived(
                        collection: group.collection, guid: group.guid, on: connection)
                    replaced.append(group.guid)
                }
                try connection.run("DELETE FROM retired_group_guids WHERE guid = \(group.guid)")
                try SQLiteObjectStore.insert(group, derived: rows, on: connection)
            }
            return replaced
        }
    }

    private static func isAdmin(_ userGuid: String, on connection: SQLiteConnection) throws -> Bool {
        try connection.first(
            """
            SELECT 1 FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)
            AND json_type(document, '$.admin') = 'true'
            """
        ) { _ in true } ?? false
    }
}
