import RoostStore

/// What migration 1 creates on PostgreSQL (its step is listed in `PostgresMigrations.swift`):
/// the functions queries read JSON with, and the objects table.
extension SQLObjectStore where Database == PostgresDatabase {
    /// `objects` as the contract gives it. `doc` and `acl_doc` are what queries read; `document`
    /// and `acl` keep the exact bytes served. Text columns compare by bytes, as SQLite's do.
    static var objectsTable: String {
        """
        CREATE TABLE objects (
            id bigserial PRIMARY KEY,
            collection text COLLATE "C" NOT NULL,
            guid text COLLATE "C" NOT NULL,
            document text NOT NULL,
            doc jsonb GENERATED ALWAYS AS (roost_jsonb(document)) STORED,
            created_by text COLLATE "C",
            created_at bigint NOT NULL,
            updated_by text COLLATE "C",
            updated_at bigint NOT NULL,
            version bigint NOT NULL,
            acl text COLLATE "C",
            acl_doc jsonb GENERATED ALWAYS AS (roost_jsonb(acl)) STORED
        );
        CREATE UNIQUE INDEX objects_by_guid ON objects (collection, guid);
        CREATE INDEX objects_by_created ON objects (collection, created_at, guid);
        CREATE INDEX objects_by_updated ON objects (collection, updated_at, guid);
        CREATE INDEX objects_by_id ON objects (collection, id);

        """
    }

    /// Functions the queries use to read JSON as SQLite does.
    ///
    /// `roost_jsonb`: the document as jsonb. jsonb refuses `\\u0000`, and turns an exponent of
    /// thousands into as many digits; in such rare documents a string value ends at its first
    /// `\\u0000` (as SQLite reads it), a key has U+FFFD for it, and exponents of 400 and more are
    /// read as 400 (beyond a double's range either way, as SQLite reads them).
    /// `roost_is_integer`: whether SQLite reads the number as a 64-bit integer.
    /// `roost_regex`: the collation regular expressions run under: ICU's root locale where the
    /// server has ICU (Unicode classes and case folding, as NSRegularExpression's ICU), else "C".
    /// `roost_float8`: the double SQLite reads, infinity and zero beyond the range, not an error.
    /// Both are plain SQL expressions, not STRICT, so that the planner inlines them (a call per
    /// row costs ten times the expression).
    static var schemaFunctions: String {
        #"""
        CREATE FUNCTION roost_jsonb(document text) RETURNS jsonb
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $roost$
        DECLARE
            token text;
            colon text;
            other text;
            result text := '';
        BEGIN
            IF strpos(document, '\u0000') = 0
                AND document !~ '[eE][+-]?0*([4-9][0-9]{2}|[1-9][0-9]{3})' THEN
                RETURN document::jsonb;
            END IF;
            FOR token, colon, other IN
                SELECT m[1], m[2], m[3] FROM regexp_matches(document, '("(?:[^"\\]|\\.)*")(\s*:)?|([^"]+)', 'g') AS m
            LOOP
                IF token IS NULL THEN
                    result := result || regexp_replace(
                        other, '([eE][+-]?)0*([4-9][0-9]{2}|[1-9][0-9]{3,})', '\1400', 'g');
                ELSE
                    -- After this, every \u0000 left is one (an escaped backslash is \u005c).
                    token := replace(token, '\\', '\u005c');
                    IF colon IS NULL THEN
                        -- SQLite reads a string value up to its first U+0000.
                        token := regexp_replace(token, '\\u0000.*$', '"');
                    ELSE
                        token := replace(token, '\u0000', '\ufffd');
                    END IF;
                    result := result || token || coalesce(colon, '');
                END IF;
            END LOOP;
            RETURN result::jsonb;
        END
        $roost$;
        DO $roost$ BEGIN
            -- Strings compare by their UTF-8 bytes, as in SQLite, only in a UTF8 database.
            IF current_setting('server_encoding') <> 'UTF8' THEN
                RAISE EXCEPTION 'Roost needs a database with UTF8 encoding, not %', current_setting('server_encoding')
                USING HINT = 'CREATE DATABASE name ENCODING ''UTF8'' TEMPLATE template0';
            END IF;
            IF EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i') THEN
                CREATE COLLATION roost_regex (provider = icu, locale = 'und');
            ELSE
                CREATE COLLATION roost_regex FROM "C";
            END IF;
        END $roost$;
        CREATE FUNCTION roost_is_integer(value jsonb) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $roost$
            SELECT jsonb_typeof(value) = 'number' AND scale(value::numeric) = 0
            AND value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
        $roost$;
        CREATE FUNCTION roost_float8(value jsonb) RETURNS float8
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $roost$
            SELECT CASE
            WHEN jsonb_typeof(value) <> 'number' THEN NULL
            WHEN abs(value::numeric) >= 1.7976931348623158079372897140530341507993e308
                THEN sign(value::numeric)::float8 * 'Infinity'::float8
            WHEN abs(value::numeric) < 2.4703282292062327208828439643411068618252990130716e-324 THEN 0::float8
            ELSE value::numeric::float8 END
        $roost$;

        """#
    }
}
