import RoostStore

/// The PostgreSQL schema: every step, in the order they run, each recorded in `roost_schema` by
/// its version when applied (under an advisory lock, so instances starting together apply each
/// once). A step that shipped never changes and its number is never reused: a change is a new
/// step in its range. Ranges: objects 1–19, accounts 20–29, idempotency keys 30–39, shared state
/// 40–49, the change log 50–59, blobs 60–69, the script outbox 70–79.
extension PostgresStorage {
    public static let migrations: [Migration] = [
        Migration(
            version: 1, name: "objects",
            sql: PostgresObjectStore.schemaFunctions + PostgresObjectStore.objectsTable),
        Migration(
            version: 2, name: "group members",
            sql: """
                CREATE TABLE group_members (
                    user_guid text COLLATE "C" NOT NULL,
                    group_guid text COLLATE "C" NOT NULL,
                    PRIMARY KEY (user_guid, group_guid)
                );
                CREATE INDEX group_members_by_group ON group_members (group_guid);
                """),
        Migration(
            version: 3, name: "blob references and claims",
            sql: """
                CREATE TABLE blob_refs (
                    collection text COLLATE "C" NOT NULL,
                    guid text COLLATE "C" NOT NULL,
                    member text COLLATE "C" NOT NULL,
                    sha256 text COLLATE "C" NOT NULL,
                    PRIMARY KEY (collection, guid, member)
                );
                CREATE INDEX blob_refs_by_sha256 ON blob_refs (sha256);
                CREATE TABLE blob_claims (
                    sha256 text COLLATE "C" PRIMARY KEY,
                    claimed_at bigint NOT NULL
                );
                """),
        // PostgreSQL cuts names at 63 bytes, so a long field index gets a hashed name and this
        // table keeps what each one indexes.
        Migration(
            version: 4, name: "field indexes",
            sql: """
                CREATE TABLE field_indexes (
                    name text COLLATE "C" PRIMARY KEY,
                    collection text COLLATE "C" NOT NULL,
                    field text COLLATE "C" NOT NULL,
                    index_name text COLLATE "C" NOT NULL UNIQUE
                );
                """),
        // Each reference's target, derived in Swift before the write (`ObjectReference`):
        // queries through references seek it instead of parsing `ffUrl`s.
        Migration(
            version: 5, name: "object references",
            sql: """
                CREATE TABLE object_refs (
                    owner_collection text COLLATE "C" NOT NULL,
                    owner_guid text COLLATE "C" NOT NULL,
                    path text COLLATE "C" NOT NULL,
                    target_collection text COLLATE "C" NOT NULL,
                    target_guid text COLLATE "C" NOT NULL,
                    PRIMARY KEY (owner_collection, owner_guid, path)
                );
                """, then: ObjectReferencesBackfill()),
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
        Migration(
            version: 30, name: "idempotency keys",
            sql: """
                CREATE TABLE idempotency_keys (
                    scope text COLLATE "C" NOT NULL,
                    key text COLLATE "C" NOT NULL,
                    fingerprint bytea NOT NULL,
                    completed boolean NOT NULL DEFAULT false,
                    ran boolean NOT NULL DEFAULT false,
                    status integer,
                    headers text,
                    body bytea,
                    created_at bigint NOT NULL,
                    PRIMARY KEY (scope, key)
                );
                CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
                """),
        Migration(
            version: 40, name: "login failures",
            sql: """
                CREATE TABLE roost_login_failures (
                    key text PRIMARY KEY,
                    times bigint[] NOT NULL,
                    last_failure bigint NOT NULL
                );
                CREATE INDEX roost_login_failures_last ON roost_login_failures (last_failure);
                """),
        Migration(
            version: 41, name: "app definition",
            sql: """
                CREATE TABLE roost_app_definition (
                    id integer PRIMARY KEY CHECK (id = 1),
                    revision bigint NOT NULL,
                    text text NOT NULL,
                    applied_at bigint NOT NULL
                );
                """),
        Migration(
            version: 50, name: "change log",
            sql: """
                CREATE TABLE change_counter (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
                INSERT INTO change_counter VALUES (1, 0);
                CREATE TABLE changes (
                    seq bigint PRIMARY KEY,
                    collection text COLLATE "C" NOT NULL,
                    guid text COLLATE "C" NOT NULL,
                    operation text NOT NULL,
                    version bigint NOT NULL,
                    at bigint NOT NULL,
                    document text,
                    acl text,
                    previous_document text,
                    previous_acl text
                );
                \(PostgresChangeLog.logChangeFunction(recordingDeleter: false))
                CREATE CONSTRAINT TRIGGER change_log_objects AFTER INSERT OR UPDATE OR DELETE ON objects
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION roost_log_change();
                CREATE CONSTRAINT TRIGGER change_log_tokens AFTER DELETE ON tokens
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION roost_log_change();
                """),
        Migration(
            version: 51, name: "who deleted an object, in its change",
            sql: """
                ALTER TABLE changes ADD COLUMN actor text;
                \(PostgresChangeLog.logChangeFunction(recordingDeleter: true))
                """),
        // Blob bytes in the database (the tables exist whichever blob store is chosen). Chunks are
        // stored without compression (`STORAGE EXTERNAL`): blobs are mostly compressed already.
        Migration(
            version: 60, name: "blob files in the database",
            sql: """
                CREATE TABLE blob_files (
                    sha256 text PRIMARY KEY,
                    size bigint NOT NULL CHECK (size >= 0),
                    created_at bigint NOT NULL
                );
                CREATE TABLE blob_chunks (
                    sha256 text NOT NULL REFERENCES blob_files (sha256) ON DELETE CASCADE,
                    chunk_index integer NOT NULL CHECK (chunk_index >= 0),
                    bytes bytea NOT NULL,
                    PRIMARY KEY (sha256, chunk_index)
                );
                ALTER TABLE blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
                """),
        Migration(
            version: 70, name: "script outbox",
            sql: ScriptOutboxSQL.schema(start: "(SELECT seq FROM change_counter WHERE id = 1)")),
        Migration(
            version: 71, name: "given-up script runs by sequence", sql: ScriptOutboxSQL.givenUpIndex),
        Migration(
            version: 72, name: "failed script runs keep who deleted", sql: ScriptOutboxSQL.deleterColumn),
        Migration(version: 80, name: "push devices and outbox", sql: PostgresPushStore.schema),
        Migration(
            version: 81, name: "refresh tokens",
            sql: PostgresRefreshStore.schema(key: #"text COLLATE "C""#, hash: "bytea")),
        Migration(version: 82, name: "mail outbox and password resets", sql: PostgresMailStore.schema),
        Migration(
            version: 83, name: "sign-in identities",
            sql: PostgresIdentityStore.schema(key: #"text COLLATE "C""#, hash: "bytea")),
        Migration(version: 84, name: "e-mail verification and change", sql: PostgresAccountStore.emailSchema),
    ]

    /// The steps in `versions`: one range, for tests and tools that set up one store alone.
    public static func migrations(in versions: ClosedRange<Int>) -> [Migration] {
        migrations.filter { versions.contains($0.version) }
    }
}

extension PostgresBlobStorage {
    /// The blob tables alone (60–69), for a database that holds only blobs.
    public static var migrations: [Migration] { PostgresStorage.migrations(in: 60...69) }
}

extension PostgresLoginThrottleStore {
    /// The login throttle's table alone (40), for tests of the throttle by itself.
    public static var migrations: [Migration] { PostgresStorage.migrations(in: 40...40) }
}
