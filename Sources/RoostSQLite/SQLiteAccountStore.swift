import RoostStore

/// ``AccountStore`` on the same SQLite database as the objects.
public typealias SQLiteAccountStore = SQLAccountStore<SQLiteDatabase>

extension SQLAccountStore where Database == SQLiteDatabase {
    static var migrations: [Migration] {
        [
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
    }
}
