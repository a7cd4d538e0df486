import RoostStore

/// The SQLite schema: every step, in the order they run, each recorded in `roost_schema` by its
/// version when applied. A step that shipped never changes and its number is never reused: a
/// change is a new step at the end. (Versions 9–20 were never used.)
extension SQLiteStorage {
    public static let migrations: [Migration] = [
        Migration(
            version: 1, name: "objects",
            sql: """
                CREATE TABLE objects (
                    id INTEGER PRIMARY KEY,
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    document TEXT NOT NULL,
                    created_by TEXT,
                    created_at INTEGER NOT NULL,
                    updated_by TEXT,
                    updated_at INTEGER NOT NULL,
                    version INTEGER NOT NULL
                );
                CREATE UNIQUE INDEX objects_by_guid ON objects (collection, guid);
                CREATE INDEX objects_by_created ON objects (collection, created_at, guid);
                CREATE INDEX objects_by_updated ON objects (collection, updated_at, guid);
                """),
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
        // random(guid) draws row ids within a collection's range.
        Migration(
            version: 3, name: "objects by id",
            sql: "CREATE INDEX objects_by_id ON objects (collection, id);"),
        // Per-object access lists live beside the document; group membership is derived from
        // FFUserGroup objects so that a request finds its user's groups with one seek.
        Migration(
            version: 4, name: "access lists and group members",
            sql: """
                ALTER TABLE objects ADD COLUMN acl TEXT;
                CREATE TABLE group_members (
                    user_guid TEXT NOT NULL,
                    group_guid TEXT NOT NULL,
                    PRIMARY KEY (user_guid, group_guid)
                ) WITHOUT ROWID;
                CREATE INDEX group_members_by_group ON group_members (group_guid);
                """ + SQLiteObjectStore.groupMembersInsert(matching: "1").text + ";"),
        Migration(
            version: 5, name: "idempotency keys",
            sql: """
                CREATE TABLE idempotency_keys (
                    scope TEXT NOT NULL,
                    key TEXT NOT NULL,
                    fingerprint BLOB NOT NULL,
                    completed INTEGER NOT NULL DEFAULT 0,
                    status INTEGER,
                    headers TEXT,
                    body BLOB,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (scope, key)
                );
                CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
                """),
        // Which objects refer to which blob, derived from the documents: a member whose value is
        // `{"blob": {"sha256": …}}` is a reference. The core lets only the blob endpoints write
        // such values, so the documents are the source of truth and this table their index.
        Migration(
            version: 6, name: "blob references",
            sql: """
                CREATE TABLE blob_refs (
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    member TEXT NOT NULL,
                    sha256 TEXT NOT NULL,
                    PRIMARY KEY (collection, guid, member)
                ) WITHOUT ROWID;
                CREATE INDEX blob_refs_by_sha256 ON blob_refs (sha256);
                """),
        Migration(
            version: 7, name: "idempotency keys mark their write",
            sql: "ALTER TABLE idempotency_keys ADD COLUMN ran INTEGER NOT NULL DEFAULT 0;"),
        // An upload that reuses a stored blob claims it before it writes the object that will
        // refer to it, so that collection cannot remove it in between.
        Migration(
            version: 8, name: "blob claims",
            sql: """
                CREATE TABLE blob_claims (
                    sha256 TEXT PRIMARY KEY,
                    claimed_at INTEGER NOT NULL
                ) WITHOUT ROWID;
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
        Migration(
            version: 24, name: "change log",
            sql: """
                CREATE TABLE changes (
                    seq INTEGER PRIMARY KEY,
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    at INTEGER NOT NULL,
                    document TEXT,
                    acl TEXT,
                    previous_document TEXT,
                    previous_acl TEXT
                );
                CREATE TRIGGER objects_log_create AFTER INSERT ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, document, acl)
                VALUES (new.collection, new.guid, 'create', new.version, \(SQLiteDialect.clock), new.document, new.acl); END;
                CREATE TRIGGER objects_log_update AFTER UPDATE ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, document, acl, previous_document, previous_acl)
                VALUES (new.collection, new.guid, 'update', new.version, \(SQLiteDialect.clock), new.document, new.acl, old.document, old.acl); END;
                CREATE TRIGGER objects_log_delete AFTER DELETE ON objects BEGIN
                INSERT INTO changes (collection, guid, operation, version, at, previous_document, previous_acl)
                VALUES (old.collection, old.guid, 'delete', old.version, \(SQLiteDialect.clock), old.document, old.acl); END;
                CREATE TRIGGER tokens_log_revoke AFTER DELETE ON tokens BEGIN
                INSERT INTO changes (collection, guid, operation, version, at)
                VALUES ('', old.id, 'revoke', 0, \(SQLiteDialect.clock)); END;
                """),
        Migration(
            version: 25, name: "script outbox",
            sql: ScriptOutboxSQL.schema(start: "coalesce((SELECT max(seq) FROM changes), 0)")),
        Migration(
            version: 26, name: "given-up script runs by sequence", sql: ScriptOutboxSQL.givenUpIndex),
        Migration(
            version: 27, name: "who deleted an object, in its change",
            sql: "ALTER TABLE changes ADD COLUMN actor TEXT"),
        Migration(
            version: 28, name: "failed script runs keep who deleted", sql: ScriptOutboxSQL.deleterColumn),
        // Each reference's target, derived in Swift before the write (``ObjectReference``): queries
        // through references seek it instead of parsing `ffUrl`s.
        Migration(
            version: 29, name: "object references",
            sql: """
                CREATE TABLE object_refs (
                    owner_collection TEXT NOT NULL,
                    owner_guid TEXT NOT NULL,
                    path TEXT NOT NULL,
                    target_collection TEXT NOT NULL,
                    target_guid TEXT NOT NULL,
                    PRIMARY KEY (owner_collection, owner_guid, path)
                ) WITHOUT ROWID;
                """, then: ObjectReferencesBackfill()),
        Migration(version: 30, name: "push devices and outbox", sql: SQLitePushStore.schema),
        Migration(
            version: 31, name: "refresh tokens", sql: SQLiteRefreshStore.schema(key: "TEXT", hash: "BLOB")),
        Migration(version: 32, name: "mail outbox and password resets", sql: SQLiteMailStore.schema),
        Migration(
            version: 33, name: "sign-in identities",
            sql: SQLiteIdentityStore.schema(key: "TEXT", hash: "BLOB")),
        Migration(version: 34, name: "e-mail verification and change", sql: SQLiteAccountStore.emailSchema),
    ]
}

extension SQLObjectStore where Database == SQLiteDatabase {
    /// Rows of `group_members` for the groups matching `condition` (on `o`): each element of
    /// `users` that is a user guid or a reference to an `FFUser`. Migration 4's SQL, so the names
    /// are written out: what already ran never changes (writes derive the rows in ``DerivedRows``).
    static func groupMembersInsert(matching condition: SQL) -> SQL {
        """
        INSERT OR IGNORE INTO group_members (group_guid, user_guid)
        SELECT o.guid, CASE u.type WHEN 'text' THEN u.value ELSE substr(json_extract(u.value, '$.ffUrl'), 22) END
        FROM objects AS o, json_each(o.document, '$.users') AS u
        WHERE o.collection = 'FFUserGroup' AND \(condition)
        AND (u.type = 'text' OR (u.type = 'object' AND json_extract(u.value, '$.ffUrl') LIKE '/ff/resources/FFUser/%'))
        """
    }
}
