/// ``AccountStore`` written once, on the same database as the objects: a user's account and its
/// `FFUser` object are written in one transaction.
public final class SQLAccountStore<Database: SQLDatabase>: AccountStore {
    public typealias Connection = Database.Connection
    typealias Dialect = Connection.Dialect
    typealias Objects = SQLObjectStore<Database>
    let database: Database
    /// Which collections are users and groups: the domain's names.
    let collections: AccountCollections

    public init(database: Database, collections: AccountCollections) {
        self.database = database
        self.collections = collections
    }

    private static var accountColumns: String {
        "user_guid, user_name_key, email_key, password_hash, email_verified_at"
    }
    private static var tokenColumns: String { TokenSQL.columns }

    private static func account(_ row: Connection.ResultRow) -> AccountRecord {
        AccountRecord(
            userGuid: row.text(0) ?? "", userNameKey: row.text(1) ?? "", emailKey: row.text(2),
            passwordHash: row.text(3) ?? "", emailVerifiedAt: row.isNull(4) ? nil : row.integer(4))
    }

    private static func token(_ row: Connection.ResultRow) -> TokenRecord { TokenSQL.record(row) }

    public func createAccount(_ account: AccountRecord, user: StoredObject) async throws {
        let derived = try DerivedRows(of: user, collections: collections)
        try await database.write { connection in
            try Self.insertAccount(account, user: user, derived: derived, on: connection)
        }
    }

    /// Stores an account and its user object in the caller's transaction; throws
    /// ``AccountConflict`` for a taken name or email.
    static func insertAccount(
        _ account: AccountRecord, user: StoredObject, derived: DerivedRows, on connection: Connection
    ) throws {
        let taken = try connection.first(
            """
            SELECT CASE WHEN user_name_key = \(account.userNameKey) THEN 1 ELSE 0 END FROM accounts
            WHERE user_name_key = \(account.userNameKey) OR email_key = \(account.emailKey) LIMIT 1
            """
        ) { $0.integer(0) }
        if let taken { throw taken == 1 ? AccountConflict.userName : AccountConflict.email }
        do {
            try connection.run(
                """
                INSERT INTO accounts (user_guid, user_name_key, email_key, password_hash, email_verified_at)
                VALUES (\(account.userGuid), \(account.userNameKey), \(account.emailKey), \(account.passwordHash),
                \(account.emailVerifiedAt))
                """)
        } catch let violated where Connection.isUniqueViolation(violated) {
            // Another instance registered the name or email since the check above (with
            // several writers); the constraint's name says which.
            let message = String(describing: violated)
            if message.contains("user_name") { throw AccountConflict.userName }
            if message.contains("email") { throw AccountConflict.email }
            throw StoreError.duplicate
        }
        try Objects.insert(user, derived: derived, on: connection)
    }

    public func account(identifiedBy key: String) async throws -> AccountRecord? {
        try await database.pointRead { connection in
            try connection.first(
                """
                SELECT \(raw: Self.accountColumns) FROM accounts WHERE user_name_key = \(key) OR email_key = \(key)
                ORDER BY user_name_key = \(key) DESC LIMIT 1
                """, Self.account)
        }
    }

    public func account(userGuid: String) async throws -> AccountRecord? {
        try await database.pointRead { connection in
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
            case .none: return
            case .allExcept(let tokenId):
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid) AND id <> \(tokenId)")
            case .all:
                try connection.run("DELETE FROM tokens WHERE user_guid = \(userGuid)")
            }
            // A new password ends the address changes asked for before it (perhaps by whoever
            // knew the old one).
            try connection.run("DELETE FROM email_tokens WHERE user_guid = \(userGuid) AND purpose = 'change'")
        }
    }

    public func deleteAccount(userGuid: String) async throws -> Bool {
        let users = collections.users
        return try await database.write { connection in
            let deleted = try connection.run("DELETE FROM accounts WHERE user_guid = \(userGuid)") > 0
            try connection.run("DELETE FROM objects WHERE collection = \(users) AND guid = \(userGuid)")
            try Objects.removeDerived(collection: users, guid: userGuid, isGroup: false, on: connection)
            return deleted
        }
    }

    public func issue(_ token: TokenRecord, revoking revocation: TokenRevocation, manufacturerId: String?)
        async throws
    {
        try await database.write { connection in
            try TokenSQL.issue(connection, token, revoking: revocation, manufacturerId: manufacturerId)
        }
    }

    public func token(secretHash: [UInt8]) async throws -> TokenRecord? {
        try await database.pointRead { connection in
            try connection.first(
                "SELECT \(raw: Self.tokenColumns) FROM tokens WHERE secret_hash = \(secretHash)", Self.token)
        }
    }

    public func token(id: String) async throws -> TokenRecord? {
        try await database.pointRead { connection in
            try connection.first("SELECT \(raw: Self.tokenColumns) FROM tokens WHERE id = \(id)", Self.token)
        }
    }

    public func tokens(userGuid: String) async throws -> [TokenRecord] {
        try await database.pointRead { connection in
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

    public func ensureGroups(
        _ groups: [StoredObject], replacingWhen isSquatted: @escaping @Sendable (GroupClaim) -> Bool
    ) async throws -> [String] {
        guard !groups.isEmpty else { return [] }
        let derived = try groups.map { group throws(StoreError) in
            try DerivedRows(of: group, collections: collections)
        }
        let users = collections.users
        return try await database.write { connection in
            // Instances starting together ensure the groups one after the other.
            try connection.lock(.groups, "declared")
            var replaced: [String] = []
            for (group, rows) in zip(groups, derived) {
                if let existing = try Objects.object(
                    in: group.collection, guid: group.guid, on: connection)
                {
                    let claim = GroupClaim(
                        createdBy: existing.createdBy,
                        creatorIsAdmin: try existing.createdBy.map {
                            try Self.isAdmin($0, in: users, on: connection)
                        }
                            ?? false)
                    // Kept as it is, members and all, unless the domain calls it squatted.
                    guard isSquatted(claim) else { continue }
                    try connection.run(
                        "DELETE FROM objects WHERE collection = \(group.collection) AND guid = \(group.guid)")
                    try Objects.removeDerived(
                        collection: group.collection, guid: group.guid, isGroup: true, on: connection)
                    replaced.append(group.guid)
                }
                try connection.run("DELETE FROM retired_group_guids WHERE guid = \(group.guid)")
                try Objects.insert(group, derived: rows, on: connection)
            }
            return replaced
        }
    }

    private static func isAdmin(_ userGuid: String, in users: String, on connection: Connection) throws
        -> Bool
    {
        try connection.first(
            """
            SELECT 1 FROM objects WHERE collection = \(users) AND guid = \(userGuid)
            AND \(raw: Dialect.documentField("admin", is: "true"))
            """
        ) { _ in true } ?? false
    }
}

/// The `tokens` rows' columns and the login's statements, shared with the refresh store (whose
/// sessions are `tokens` rows too).
enum TokenSQL {
    static let columns =
        "id, user_guid, secret_hash, device_id, device_type, created_at, expires_at, renewed_at, client_address, refresh_expires_at"

    static func record(_ row: some DatabaseRow) -> TokenRecord {
        TokenRecord(
            id: row.text(0) ?? "", userGuid: row.text(1) ?? "", secretHash: row.bytes(2),
            deviceId: row.text(3) ?? "",
            deviceType: row.text(4), createdAt: row.integer(5), expiresAt: row.integer(6),
            renewedAt: row.integer(7), clientAddress: row.text(8),
            refreshExpiresAt: row.isNull(9) ? nil : row.integer(9))
    }

    static func row(_ connection: some SQLRunning, id: String) throws -> TokenRecord? {
        try connection.first("SELECT \(raw: columns) FROM tokens WHERE id = \(id)", record)
    }

    /// Stores a token after deleting those `revocation` names (their refresh tokens go with
    /// them), and records the device.
    static func issue<C: SQLConnection>(
        _ connection: C, _ token: TokenRecord, revoking revocation: TokenRevocation, manufacturerId: String?
    ) throws {
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
                ORDER BY created_at DESC, \(raw: C.Dialect.tokenIssueOrder) DESC LIMIT \(Int64(kept)))
                """)
        }
        try connection.run(
            """
            INSERT INTO tokens (\(raw: columns)) VALUES (\(token.id), \(token.userGuid), \(token.secretHash),
            \(token.deviceId), \(token.deviceType), \(token.createdAt), \(token.expiresAt), \(token.renewedAt),
            \(token.clientAddress), \(token.refreshExpiresAt))
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
