import RoostStore

/// ``AccountStore`` on the same PostgreSQL database as the objects.
public typealias PostgresAccountStore = SQLAccountStore<PostgresDatabase>

extension SQLAccountStore where Database == PostgresDatabase {
    public static var migrations: [Migration] {
        [
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
    }
}
