/// ``RefreshStore`` written once for both drivers, on the database that holds the sessions.
public final class SQLRefreshStore<Database: SQLDatabase>: RefreshStore {
    let database: Database

    /// The table, for each driver's migrations: `key` and `hash` are its types for a token id
    /// and a SHA-256.
    public static func schema(key: String, hash: String) -> String { RefreshSQL.schema(key: key, hash: hash) }

    public init(database: Database) {
        self.database = database
    }

    public func issue(
        _ token: TokenRecord, refresh: RefreshTokenRecord, revoking revocation: TokenRevocation,
        manufacturerId: String?
    ) async throws {
        try await database.write { connection in
            try TokenSQL.issue(connection, token, revoking: revocation, manufacturerId: manufacturerId)
            try RefreshSQL.insert(connection, refresh)
        }
    }

    public func lookup(secretHash: [UInt8]) async throws -> RefreshLookup? {
        try await database.pointRead { try RefreshSQL.lookup($0, secretHash: secretHash) }
    }

    public func rotate(_ rotation: RefreshRotation) async throws -> RefreshOutcome {
        try await database.write { connection in
            // The user's sessions one change at a time (logins, revocations, exchanges), so two
            // exchanges of one token cannot both pass, and none races the session's end.
            try connection.lock(.sessions, rotation.userGuid)
            return try RefreshSQL.rotate(connection, rotation)
        }
    }

    public func revokeFamily(secretHash: [UInt8]) async throws -> String? {
        try await database.write { connection in
            guard let found = try RefreshSQL.lookup(connection, secretHash: secretHash) else { return nil }
            try connection.run("DELETE FROM tokens WHERE id = \(found.refresh.tokenId)")
            return found.refresh.tokenId
        }
    }
}
