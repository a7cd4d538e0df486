PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE roost_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
INSERT INTO roost_schema VALUES(1,'objects',1796299827830);
INSERT INTO roost_schema VALUES(2,'accounts',1796299827830);
INSERT INTO roost_schema VALUES(3,'objects by id',1796299827830);
INSERT INTO roost_schema VALUES(4,'access lists and group members',1796299827830);
INSERT INTO roost_schema VALUES(5,'idempotency keys',1796299827830);
INSERT INTO roost_schema VALUES(6,'blob references',1796299827830);
INSERT INTO roost_schema VALUES(7,'idempotency keys mark their write',1796299827831);
INSERT INTO roost_schema VALUES(8,'blob claims',1796299827831);
INSERT INTO roost_schema VALUES(21,'deactivation revokes tokens',1796299827831);
INSERT INTO roost_schema VALUES(22,'retired group guids',1796299827831);
INSERT INTO roost_schema VALUES(23,'session client addresses',1796299827831);
INSERT INTO roost_schema VALUES(24,'change log',1796299827831);
INSERT INTO roost_schema VALUES(25,'script outbox',1796299827831);
INSERT INTO roost_schema VALUES(26,'given-up script runs by sequence',1796299827832);
INSERT INTO roost_schema VALUES(27,'who deleted an object, in its change',1796299827832);
INSERT INTO roost_schema VALUES(28,'failed script runs keep who deleted',1796299827832);
CREATE TABLE roost_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO roost_meta VALUES('schema_version','28');
INSERT INTO roost_meta VALUES('written_by','0.1.0');
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
, acl TEXT);
INSERT INTO objects VALUES(1,'FFUser','u1','{"guid":"u1","userName":"ann","admin":false,"n":1.50}',NULL,1,NULL,1,1,NULL);
INSERT INTO objects VALUES(2,'FFUserGroup','g1','{"guid":"g1","users":[{"ffUrl":"/ff/resources/FFUser/u1"},"u2"]}','u1',1,'u1',1,1,NULL);
INSERT INTO objects VALUES(3,'Post','p1','{"guid":"p1","title":"hello","author":{"ffUrl":"/ff/resources/FFUser/u1"},"photo":{"blob":{"sha256":"abc123"},"contentType":"image/png"},"nested":{"owner":{"ffUrl":"/ff/resources/FFUser/u1"}}}','u1',20,'u1',20,1,'{"readUsers":["u1"]}');
INSERT INTO objects VALUES(4,'Post','p2','{"guid":"p2","v":2}',NULL,30,NULL,30,2,NULL);
CREATE TABLE accounts (
    user_guid TEXT PRIMARY KEY,
    user_name_key TEXT NOT NULL UNIQUE,
    email_key TEXT UNIQUE,
    password_hash TEXT NOT NULL
);
INSERT INTO accounts VALUES('u1','ann','ann@example.com','$argon2id$x');
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
    secret_hash BLOB NOT NULL UNIQUE,
    device_id TEXT NOT NULL,
    device_type TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL
, client_address TEXT);
INSERT INTO tokens VALUES('t1','u1',X'010203','phone','ios',10,4000000000000,10,'192.0.2.1');
CREATE TABLE devices (
    user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
    device_id TEXT NOT NULL,
    device_type TEXT,
    manufacturer_id TEXT,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (user_guid, device_id)
);
INSERT INTO devices VALUES('u1','phone','ios','m1',10);
CREATE TABLE group_members (
    user_guid TEXT NOT NULL,
    group_guid TEXT NOT NULL,
    PRIMARY KEY (user_guid, group_guid)
) WITHOUT ROWID;
INSERT INTO group_members VALUES('u1','g1');
INSERT INTO group_members VALUES('u2','g1');
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    completed INTEGER NOT NULL DEFAULT 0,
    status INTEGER,
    headers TEXT,
    body BLOB,
    created_at INTEGER NOT NULL, ran INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key)
);
INSERT INTO idempotency_keys VALUES('u1','k1',X'09',1,201,'ETag: "1"',X'7b7d',40,0);
CREATE TABLE blob_refs (
    collection TEXT NOT NULL,
    guid TEXT NOT NULL,
    member TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (collection, guid, member)
) WITHOUT ROWID;
INSERT INTO blob_refs VALUES('Post','p1','photo','abc123');
CREATE TABLE blob_claims (
    sha256 TEXT PRIMARY KEY,
    claimed_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE retired_group_guids (guid TEXT PRIMARY KEY) WITHOUT ROWID;
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
, actor TEXT);
INSERT INTO changes VALUES(1,'FFUser','u1','create',1,1796299827833,'{"guid":"u1","userName":"ann","admin":false,"n":1.50}',NULL,NULL,NULL,NULL);
INSERT INTO changes VALUES(2,'FFUserGroup','g1','create',1,1796299827834,'{"guid":"g1","users":[{"ffUrl":"/ff/resources/FFUser/u1"},"u2"]}',NULL,NULL,NULL,NULL);
INSERT INTO changes VALUES(3,'Post','p1','create',1,1796299827834,'{"guid":"p1","title":"hello","author":{"ffUrl":"/ff/resources/FFUser/u1"},"photo":{"blob":{"sha256":"abc123"},"contentType":"image/png"},"nested":{"owner":{"ffUrl":"/ff/resources/FFUser/u1"}}}','{"readUsers":["u1"]}',NULL,NULL,NULL);
INSERT INTO changes VALUES(4,'Post','p2','create',1,1796299827834,'{"guid":"p2","v":1}',NULL,NULL,NULL,NULL);
INSERT INTO changes VALUES(5,'Post','p2','update',2,1796299827835,'{"guid":"p2","v":2}',NULL,'{"guid":"p2","v":1}',NULL,NULL);
INSERT INTO changes VALUES(6,'Post','p3','create',1,1796299827835,'{"guid":"p3"}',NULL,NULL,NULL,NULL);
INSERT INTO changes VALUES(7,'Post','p3','delete',1,1796299827835,NULL,NULL,'{"guid":"p3"}',NULL,'u1');
CREATE TABLE script_outbox (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    dispatched_through BIGINT NOT NULL,
    holder TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0
);
INSERT INTO script_outbox VALUES(1,0,NULL,0);
CREATE TABLE script_outbox_subscriptions (
    handler TEXT NOT NULL,
    collection TEXT NOT NULL,
    operation TEXT NOT NULL,
    PRIMARY KEY (handler, collection, operation)
);
INSERT INTO script_outbox_subscriptions VALUES('notify','Post','create');
CREATE TABLE script_failures (
    seq BIGINT NOT NULL,
    handler TEXT NOT NULL,
    collection TEXT NOT NULL,
    guid TEXT NOT NULL,
    operation TEXT NOT NULL,
    version BIGINT NOT NULL,
    at BIGINT NOT NULL,
    document TEXT,
    acl TEXT,
    previous_document TEXT,
    previous_acl TEXT,
    attempts INTEGER NOT NULL,
    error TEXT NOT NULL,
    next_attempt BIGINT,
    state TEXT NOT NULL,
    trimmed INTEGER NOT NULL DEFAULT 0, actor TEXT,
    PRIMARY KEY (seq, handler)
);
CREATE UNIQUE INDEX objects_by_guid ON objects (collection, guid);
CREATE INDEX objects_by_created ON objects (collection, created_at, guid);
CREATE INDEX objects_by_updated ON objects (collection, updated_at, guid);
CREATE INDEX tokens_by_user ON tokens (user_guid, device_id);
CREATE INDEX objects_by_id ON objects (collection, id);
CREATE INDEX group_members_by_group ON group_members (group_guid);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
CREATE INDEX blob_refs_by_sha256 ON blob_refs (sha256);
CREATE TRIGGER deactivation_revokes_tokens AFTER UPDATE OF document ON objects
WHEN new.collection = 'FFUser' AND json_type(new.document, '$.active') = 'false'
BEGIN DELETE FROM tokens WHERE user_guid = new.guid; END;
CREATE TRIGGER group_delete_retires_guid AFTER DELETE ON objects
WHEN old.collection = 'FFUserGroup'
BEGIN INSERT OR IGNORE INTO retired_group_guids (guid) VALUES (old.guid); END;
CREATE TRIGGER retired_group_guid_stays_retired BEFORE INSERT ON objects
WHEN new.collection = 'FFUserGroup'
BEGIN INSERT INTO retired_group_guids (guid)
SELECT new.guid WHERE new.guid IN (SELECT guid FROM retired_group_guids); END;
CREATE TRIGGER objects_log_create AFTER INSERT ON objects BEGIN
INSERT INTO changes (collection, guid, operation, version, at, document, acl)
VALUES (new.collection, new.guid, 'create', new.version, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), new.document, new.acl); END;
CREATE TRIGGER objects_log_update AFTER UPDATE ON objects BEGIN
INSERT INTO changes (collection, guid, operation, version, at, document, acl, previous_document, previous_acl)
VALUES (new.collection, new.guid, 'update', new.version, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), new.document, new.acl, old.document, old.acl); END;
CREATE TRIGGER objects_log_delete AFTER DELETE ON objects BEGIN
INSERT INTO changes (collection, guid, operation, version, at, previous_document, previous_acl)
VALUES (old.collection, old.guid, 'delete', old.version, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), old.document, old.acl); END;
CREATE TRIGGER tokens_log_revoke AFTER DELETE ON tokens BEGIN
INSERT INTO changes (collection, guid, operation, version, at)
VALUES ('', old.id, 'revoke', 0, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)); END;
CREATE INDEX script_failures_due ON script_failures (state, next_attempt);
CREATE INDEX script_failures_by_state_seq ON script_failures (state, seq);
CREATE INDEX "field:Post:title"
ON objects (collection, json_extract(document, '$.title'));
COMMIT;
