import RoostStore

/// ``AccountStore`` on the same PostgreSQL database as the objects: a user's account and its
/// `FFUser` object are written in one transaction.
public final class PostgresAccountStore: AccountStore {
    let database: PostgresDatabase

    public static let migrations = [
        Migration(
            version: 20, name: "accounts",
            sql: """
                CREATE TABLE accounts (
                    user_guid text COLLATE "C" PRIMARY KEY,
                    user_name_key text COLLATE "C" NOT NULL CONSTRAINT accounts_user_name_unique UNIQUE,
                    email_key text COLLATE "C" CONSTRAINT accounts_email_unique UNIQUE,
                    password_hash text NOT NULL
                );
                CREATE TABLE tokens (
                    id text COLLATE "C" PRIMARY KEY,
                    user_guid text COLLATE "C" NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
                    secret_hash bytea NOT NULL UNIQUE,
                    device_id text COLLATE "C" NOT NULL,
                    device_type text,
                    created_at bigint NOT NULL,
                    expires_at bigint NOT NULL,
                    renewed_at bigint NOT NULL,
                    client_address text,
                    issued bigserial NOT NULL
                );
                CREATE INDEX tokens_by_user ON tokens (user_guid, device_id);
                CREATE TABLE devices (
                    user_guid text COLLATE "C" NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
                    device_id text COLLATE "C" NOT NULL,
                    device_type text,
                    manufacturer_id text,
                    last_seen_at bigint NOT NULL,
                    PRIMARY KEY (user_guid, device_id)
                );
                """),
        // Deactivating a user (`active: false` on the FFUser object) deletes their tokens in the
        // same write, whichever write path changed the object.
        Migration(
            version: 21, name: "deactivation revokes tokens",
            sql: """
                CREATE FUNCTION roost_deactivation_revokes_tokens() RETURNS trigger LANGUAGE plpgsql AS $roost$
                BEGIN
                    DELETE FROM tokens WHERE user_guid = NEW.guid;
                    RETURN NULL;
                END
                $roost$;
                CREATE TRIGGER deactivation_revokes_tokens AFTER UPDATE OF document ON objects
                FOR EACH ROW WHEN (NEW.collection = 'FFUser' AND NEW.doc -> 'active' = 'false'::jsonb)
                EXECUTE FUNCTION roost_deactivation_revokes_tokens();
                """),
        // A deleted group's guid is never a group again; inserting it fails as a duplicate would.
        Migration(
            version: 22, name: "retired group guids",
            sql: """
                CREATE TABLE retired_group_guids (guid text COLLATE "C" PRIMARY KEY);
                CREATE FUNCTION roost_group_delete_retires_guid() RETURNS trigger LANGUAGE plpgsql AS $roost$
                BEGIN
                    INSERT INTO retired_group_guids (guid) VALUES (OLD.guid) ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END
                $roost$;
                CREATE TRIGGER group_delete_retires_guid AFTER DELETE ON objects
                FOR EACH ROW WHEN (OLD.collection = 'FFUserGroup')
                EXECUTE FUNCTION roost_group_delete_retires_guid();
                CREATE FUNCTION roost_retired_group_guid_stays_retired() RETURNS trigger LANGUAGE plpgsql AS $roost$
                BEGIN
                    IF EXISTS (SELECT 1 FROM retired_group_guids WHERE guid = NEW.guid) THEN
                        RAISE EXCEPTION 'the group guid is retired' USING ERRCODE = 'unique_violation';
                    END IF;
                    RETURN NEW;
                END
                $roost$;
                CREATE TRIGGER retired_group_guid_stays_retired BEFORE INSERT ON objects
                FOR EACH ROW WHEN (NEW.collection = 'FFUserGroup')
                EXECUTE FUNCTION roost_retired_group_guid_stays_retired();
                """),
    ]

    public init(database: PostgresDatabase) {
        self.database = database
    }

    private static let accountColumns = "user_guid, user_name_key, email_key, password_hash"
    private static let tokenColumns =
        "id, user_guid, secret_hash, device_id, device_type, created_at, expires_at, renewed_at, client_address"

    private static func account(_ row: PostgresRow) -> AccountRecord {
        AccountRecord(
            userGuid: row.text(0) ?? "", userNameKey: row.text(1) ?? "", emailKey: row.text(2),
            passwordHash: row.text(3) ?? "")
    }

    private static func token(_ row: PostgresRow) -> TokenRecord {
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
            ) { $0.bool(0) }
            if let taken { throw taken ? AccountConflict.userName : AccountConflict.email }
            do {
                try connection.run(
                    """
                    INSERT INTO accounts (user_guid, user_name_key, email_key, password_hash)
                    VALUES (\(account.userGuid), \(account.userNameKey), \(account.emailKey), \(account.passwordHash))
                    """)
            } catch let error as PostgresError where error.isUniqueViolation {
                // Another instance registered the name or email since the check above.
                if error.message.contains("accounts_user_name_unique") { throw AccountConflict.userName }
                if error.message.contains("accounts_email_unique") { throw AccountConflict.email }
                throw StoreError.duplicate
            }
            try PostgresObjectStore.insert(user, derived: derived, on: connection)
        }
    }

    public func account(identifiedBy key: String) async throws -> AccountRecord? {
        try await database.read { connection in
            try connection.first(
                """
                SELECT \(raw: Self.accountColumns) FROM accounts WHERE user_name_key = \(key) OR email_key = \(key)
                ORDER BY user_name_key = \(key) DESC LIMIT 1
                """, Self.account)
        }
    }

    public func account(userGuid: String) async throws -> AccountRecord? {
        try await database.read { connection in
            try connection.first(
                "SELECT \(raw: Self.accountColumns) FROM accounts WHERE user_guid = \(userGuid)", Self.account
            )
        }
    }

    public func updatePasswordHash(userGuid: String, hash: String, revoking: TokenCleanup) async throws {
        try await database.write { connection in
            try connection.lock(.sessions, userGuid)
            try connection.run("UPDATE accounts SET password_hash = \(hash) WHERE user_guid = \(userGuid)")
            switch revoking {
            case .none: break
            case .allExcept(let tokenId):
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid) AND id <> \(tokenId)")
            case .all:
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid)")
            }
        }
    }

    public func deleteAccount(userGuid: String) async throws -> Bool {
        try await database.write { connection in
            let deleted = try connection.run("DELETE FROM accounts WHERE user_guid = \(userGuid)") > 0
            try connection.run("DELETE FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)")
            try PostgresObjectStore.removeDerived(collection: "FFUser", guid: userGuid, on: connection)
            return deleted
        }
    }

    public func issue(_ token: TokenRecord, revoking revocation: TokenRevocation, manufacturerId: String?)
        async throws
    {
        try await database.write { connection in
            // Logins of one user one after the other, as SQLite's writer runs them: two logins
            // that each replace the device's token must not both keep theirs.
            try connection.lock(.sessions, token.userGuid)
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
                    ORDER BY created_at DESC, issued DESC LIMIT \(Int64(kept)))
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
                device_type = coalesce(excluded.device_type, devices.device_type),
                manufacturer_id = coalesce(excluded.manufacturer_id, devices.manufacturer_id),
                last_seen_at = excluded.last_seen_at
                """)
        }
    }

    public func token(secretHash: [UInt8]) async throws -> TokenRecord? {
        try await database.read { connection in
            try connection.first(
                "SELECT \(raw: Self.tokenColumns) FROM tokens WHERE secret_hash = \(secretHash)", Self.token)
        }
    }

    public func token(id: String) async throws -> TokenRecord? {
        try await database.read { connection in
            try connection.first("SELECT \(raw: Self.tokenColumns) FROM tokens WHERE id = \(id)", Self.token)
        }
    }

    public func tokens(userGuid: String) async throws -> [TokenRecord] {
        try await database.read { connection in
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
        try await database.write { connection in
            try connection.run(
                "UPDATE tokens SET expires_at = \(expiresAt), renewed_at = \(renewedAt) WHERE id = \(id)")
        }
    }

    public func ensureGroups(_ groups: [StoredObject]) async throws -> [String] {
        guard !groups.isEmpty else { return [] }
        let derived = groups.map(DerivedRows.init(of:))
        return try await database.write { connection in
            // Instances starting together ensure the groups one after the other.
            try connection.lock(.groups, "declared")
            var replaced: [String] = []
            for (group, rows) in zip(groups, derived) {
                if let existing = try PostgresObjectStore.object(
                    in: group.collection, guid: group.guid, on: connection)
                {
                    // The system's, or an administrator's: adopted as it is, members and all.
                    guard let creator = existing.createdBy, try !Self.isAdmin(creator, on: connection) else {
                        continue
                    }
                    // Claimed by a user before the app declared it: squatted, so replaced.
                    try connection.run(
                        "DELETE FROM objects WHERE collection = \(group.collection) AND guid = \(group.guid)")
                    try PostgresObjectStore.removeDerived(
                        collection: group.collection, guid: group.guid, on: connection)
                    replaced.append(group.guid)
                }
                try connection.run("DELETE FROM retired_group_guids WHERE guid = \(group.guid)")
                try PostgresObjectStore.insert(group, derived: rows, on: connection)
            }
            return replaced
        }
    }

    private static func isAdmin(_ userGuid: String, on connection: PostgresConnection) throws -> Bool {
        try connection.first(
            """
            SELECT 1 FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)
            AND doc -> 'admin' = 'true'::jsonb
            """
        ) { _ in true } ?? false
    }
}
