--
-- PostgreSQL database dump
--

\restrict 0R719ybCfIdxyDXuH9bqgw8yA76Q43T6h6nVcJzM7LqdoZs2sCGiaQ2Ybktixdm

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: roost_regex; Type: COLLATION; Schema: public; Owner: -
--

CREATE COLLATION public.roost_regex (provider = icu, locale = 'und');


--
-- Name: roost_deactivation_revokes_tokens(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_deactivation_revokes_tokens() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM tokens WHERE user_guid = NEW.guid;
    RETURN NULL;
END
$$;


--
-- Name: roost_float8(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_float8(value jsonb) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE
    WHEN jsonb_typeof(value) <> 'number' THEN NULL
    WHEN abs(value::numeric) >= 1.7976931348623158079372897140530341507993e308
        THEN sign(value::numeric)::float8 * 'Infinity'::float8
    WHEN abs(value::numeric) < 2.4703282292062327208828439643411068618252990130716e-324 THEN 0::float8
    ELSE value::numeric::float8 END
$$;


--
-- Name: roost_group_delete_retires_guid(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_group_delete_retires_guid() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO retired_group_guids (guid) VALUES (OLD.guid) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;


--
-- Name: roost_is_integer(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_is_integer(value jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT jsonb_typeof(value) = 'number' AND scale(value::numeric) = 0
    AND value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
$$;


--
-- Name: roost_jsonb(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_jsonb(document text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$
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
$_$;


--
-- Name: roost_log_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_log_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    next bigint;
    now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO next;
    IF TG_TABLE_NAME = 'tokens' THEN
        INSERT INTO changes (seq, collection, guid, operation, version, at)
        VALUES (next, '', OLD.id, 'revoke', 0, now_ms);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO changes (seq, collection, guid, operation, version, at, document, acl)
        VALUES (next, NEW.collection, NEW.guid, 'create', NEW.version, now_ms, NEW.document, NEW.acl);
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO changes (seq, collection, guid, operation, version, at, document, acl,
            previous_document, previous_acl)
        VALUES (next, NEW.collection, NEW.guid, 'update', NEW.version, now_ms, NEW.document, NEW.acl,
            OLD.document, OLD.acl);
    ELSE
INSERT INTO changes (seq, collection, guid, operation, version, at, previous_document, previous_acl, actor)
    VALUES (next, OLD.collection, OLD.guid, 'delete', OLD.version, now_ms, OLD.document, OLD.acl,
        NULLIF(current_setting('roost.actor', true), ''));
    END IF;
    PERFORM pg_notify('roost_changes', '');
    RETURN NULL;
END
$$;


--
-- Name: roost_retired_group_guid_stays_retired(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.roost_retired_group_guid_stays_retired() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM retired_group_guids WHERE guid = NEW.guid) THEN
        RAISE EXCEPTION 'the group guid is retired' USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    user_guid text NOT NULL COLLATE pg_catalog."C",
    user_name_key text NOT NULL COLLATE pg_catalog."C",
    email_key text COLLATE pg_catalog."C",
    password_hash text NOT NULL
);


--
-- Name: blob_chunks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blob_chunks (
    sha256 text NOT NULL,
    chunk_index integer NOT NULL,
    bytes bytea NOT NULL,
    CONSTRAINT blob_chunks_chunk_index_check CHECK ((chunk_index >= 0))
);
ALTER TABLE ONLY public.blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;


--
-- Name: blob_claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blob_claims (
    sha256 text NOT NULL COLLATE pg_catalog."C",
    claimed_at bigint NOT NULL
);


--
-- Name: blob_files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blob_files (
    sha256 text NOT NULL,
    size bigint NOT NULL,
    created_at bigint NOT NULL,
    CONSTRAINT blob_files_size_check CHECK ((size >= 0))
);


--
-- Name: blob_refs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blob_refs (
    collection text NOT NULL COLLATE pg_catalog."C",
    guid text NOT NULL COLLATE pg_catalog."C",
    member text NOT NULL COLLATE pg_catalog."C",
    sha256 text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: change_counter; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.change_counter (
    id integer NOT NULL,
    seq bigint NOT NULL,
    CONSTRAINT change_counter_id_check CHECK ((id = 1))
);


--
-- Name: changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.changes (
    seq bigint NOT NULL,
    collection text NOT NULL COLLATE pg_catalog."C",
    guid text NOT NULL COLLATE pg_catalog."C",
    operation text NOT NULL,
    version bigint NOT NULL,
    at bigint NOT NULL,
    document text,
    acl text,
    previous_document text,
    previous_acl text,
    actor text
);


--
-- Name: devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.devices (
    user_guid text NOT NULL COLLATE pg_catalog."C",
    device_id text NOT NULL COLLATE pg_catalog."C",
    device_type text,
    manufacturer_id text,
    last_seen_at bigint NOT NULL
);


--
-- Name: field_indexes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.field_indexes (
    name text NOT NULL COLLATE pg_catalog."C",
    collection text NOT NULL COLLATE pg_catalog."C",
    field text NOT NULL COLLATE pg_catalog."C",
    index_name text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: group_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.group_members (
    user_guid text NOT NULL COLLATE pg_catalog."C",
    group_guid text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    scope text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    fingerprint bytea NOT NULL,
    completed boolean DEFAULT false NOT NULL,
    ran boolean DEFAULT false NOT NULL,
    status integer,
    headers text,
    body bytea,
    created_at bigint NOT NULL
);


--
-- Name: objects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.objects (
    id bigint NOT NULL,
    collection text NOT NULL COLLATE pg_catalog."C",
    guid text NOT NULL COLLATE pg_catalog."C",
    document text NOT NULL,
    doc jsonb GENERATED ALWAYS AS (public.roost_jsonb(document)) STORED,
    created_by text COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    updated_by text COLLATE pg_catalog."C",
    updated_at bigint NOT NULL,
    version bigint NOT NULL,
    acl text COLLATE pg_catalog."C",
    acl_doc jsonb GENERATED ALWAYS AS (public.roost_jsonb(acl)) STORED
);


--
-- Name: objects_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.objects_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: objects_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.objects_id_seq OWNED BY public.objects.id;


--
-- Name: retired_group_guids; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.retired_group_guids (
    guid text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: roost_app_definition; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.roost_app_definition (
    id integer NOT NULL,
    revision bigint NOT NULL,
    text text NOT NULL,
    applied_at bigint NOT NULL,
    CONSTRAINT roost_app_definition_id_check CHECK ((id = 1))
);


--
-- Name: roost_login_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.roost_login_failures (
    key text NOT NULL,
    times bigint[] NOT NULL,
    last_failure bigint NOT NULL
);


--
-- Name: roost_meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.roost_meta (
    key text NOT NULL,
    value text NOT NULL
);


--
-- Name: roost_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.roost_schema (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at bigint NOT NULL
);


--
-- Name: script_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.script_failures (
    seq bigint NOT NULL,
    handler text NOT NULL,
    collection text NOT NULL,
    guid text NOT NULL,
    operation text NOT NULL,
    version bigint NOT NULL,
    at bigint NOT NULL,
    document text,
    acl text,
    previous_document text,
    previous_acl text,
    attempts integer NOT NULL,
    error text NOT NULL,
    next_attempt bigint,
    state text NOT NULL,
    trimmed integer DEFAULT 0 NOT NULL,
    actor text
);


--
-- Name: script_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.script_outbox (
    id integer NOT NULL,
    dispatched_through bigint NOT NULL,
    holder text,
    lease_until bigint DEFAULT 0 NOT NULL,
    CONSTRAINT script_outbox_id_check CHECK ((id = 1))
);


--
-- Name: script_outbox_subscriptions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.script_outbox_subscriptions (
    handler text NOT NULL,
    collection text NOT NULL,
    operation text NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    id text NOT NULL COLLATE pg_catalog."C",
    user_guid text NOT NULL COLLATE pg_catalog."C",
    secret_hash bytea NOT NULL,
    device_id text NOT NULL COLLATE pg_catalog."C",
    device_type text,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    renewed_at bigint NOT NULL,
    client_address text,
    issued bigint NOT NULL
);


--
-- Name: tokens_issued_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.tokens_issued_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tokens_issued_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.tokens_issued_seq OWNED BY public.tokens.issued;


--
-- Name: objects id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.objects ALTER COLUMN id SET DEFAULT nextval('public.objects_id_seq'::regclass);


--
-- Name: tokens issued; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens ALTER COLUMN issued SET DEFAULT nextval('public.tokens_issued_seq'::regclass);


--
-- Data for Name: accounts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.accounts VALUES ('u1', 'ann', 'ann@example.com', '$argon2id$x');


--
-- Data for Name: blob_chunks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: blob_claims; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: blob_files; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: blob_refs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.blob_refs VALUES ('Post', 'p1', 'photo', 'abc123');


--
-- Data for Name: change_counter; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.change_counter VALUES (1, 7);


--
-- Data for Name: changes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.changes VALUES (1, 'FFUser', 'u1', 'create', 1, 1796299828043, '{"guid":"u1","userName":"ann","admin":false,"n":1.50}', NULL, NULL, NULL, NULL);
INSERT INTO public.changes VALUES (2, 'FFUserGroup', 'g1', 'create', 1, 1796299828050, '{"guid":"g1","users":[{"ffUrl":"/ff/resources/FFUser/u1"},"u2"]}', NULL, NULL, NULL, NULL);
INSERT INTO public.changes VALUES (3, 'Post', 'p1', 'create', 1, 1796299828056, '{"guid":"p1","title":"hello","author":{"ffUrl":"/ff/resources/FFUser/u1"},"photo":{"blob":{"sha256":"abc123"},"contentType":"image/png"},"nested":{"owner":{"ffUrl":"/ff/resources/FFUser/u1"}}}', '{"readUsers":["u1"]}', NULL, NULL, NULL);
INSERT INTO public.changes VALUES (4, 'Post', 'p2', 'create', 1, 1796299828061, '{"guid":"p2","v":1}', NULL, NULL, NULL, NULL);
INSERT INTO public.changes VALUES (5, 'Post', 'p2', 'update', 2, 1796299828066, '{"guid":"p2","v":2}', NULL, '{"guid":"p2","v":1}', NULL, NULL);
INSERT INTO public.changes VALUES (6, 'Post', 'p3', 'create', 1, 1796299828071, '{"guid":"p3"}', NULL, NULL, NULL, NULL);
INSERT INTO public.changes VALUES (7, 'Post', 'p3', 'delete', 1, 1796299828076, NULL, NULL, '{"guid":"p3"}', NULL, 'u1');


--
-- Data for Name: devices; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.devices VALUES ('u1', 'phone', 'ios', 'm1', 10);


--
-- Data for Name: field_indexes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.field_indexes VALUES ('field:Post:title', 'Post', 'title', 'field:Post:title');


--
-- Data for Name: group_members; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.group_members VALUES ('u1', 'g1');
INSERT INTO public.group_members VALUES ('u2', 'g1');


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.idempotency_keys VALUES ('u1', 'k1', '\x09', true, false, 201, 'ETag: "1"', '\x7b7d', 40);


--
-- Data for Name: objects; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.objects VALUES (1, 'FFUser', 'u1', '{"guid":"u1","userName":"ann","admin":false,"n":1.50}', DEFAULT, NULL, 1, NULL, 1, 1, NULL, DEFAULT);
INSERT INTO public.objects VALUES (2, 'FFUserGroup', 'g1', '{"guid":"g1","users":[{"ffUrl":"/ff/resources/FFUser/u1"},"u2"]}', DEFAULT, 'u1', 1, 'u1', 1, 1, NULL, DEFAULT);
INSERT INTO public.objects VALUES (3, 'Post', 'p1', '{"guid":"p1","title":"hello","author":{"ffUrl":"/ff/resources/FFUser/u1"},"photo":{"blob":{"sha256":"abc123"},"contentType":"image/png"},"nested":{"owner":{"ffUrl":"/ff/resources/FFUser/u1"}}}', DEFAULT, 'u1', 20, 'u1', 20, 1, '{"readUsers":["u1"]}', DEFAULT);
INSERT INTO public.objects VALUES (4, 'Post', 'p2', '{"guid":"p2","v":2}', DEFAULT, NULL, 30, NULL, 30, 2, NULL, DEFAULT);


--
-- Data for Name: retired_group_guids; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: roost_app_definition; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.roost_app_definition VALUES (1, 1, '{"collections":{}}', 60);


--
-- Data for Name: roost_login_failures; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.roost_login_failures VALUES ('account:ann', '{50}', 50);


--
-- Data for Name: roost_meta; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.roost_meta VALUES ('written_by', '0.1.0');
INSERT INTO public.roost_meta VALUES ('schema_version', '72');


--
-- Data for Name: roost_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.roost_schema VALUES (1, 'objects', 1796299827963);
INSERT INTO public.roost_schema VALUES (2, 'group members', 1796299827968);
INSERT INTO public.roost_schema VALUES (3, 'blob references and claims', 1796299827974);
INSERT INTO public.roost_schema VALUES (4, 'field indexes', 1796299827978);
INSERT INTO public.roost_schema VALUES (20, 'accounts', 1796299827990);
INSERT INTO public.roost_schema VALUES (21, 'deactivation revokes tokens', 1796299827992);
INSERT INTO public.roost_schema VALUES (22, 'retired group guids', 1796299827995);
INSERT INTO public.roost_schema VALUES (30, 'idempotency keys', 1796299827999);
INSERT INTO public.roost_schema VALUES (40, 'login failures', 1796299828004);
INSERT INTO public.roost_schema VALUES (41, 'app definition', 1796299828008);
INSERT INTO public.roost_schema VALUES (50, 'change log', 1796299828014);
INSERT INTO public.roost_schema VALUES (51, 'who deleted an object, in its change', 1796299828014);
INSERT INTO public.roost_schema VALUES (60, 'blob files in the database', 1796299828021);
INSERT INTO public.roost_schema VALUES (70, 'script outbox', 1796299828031);
INSERT INTO public.roost_schema VALUES (71, 'given-up script runs by sequence', 1796299828032);
INSERT INTO public.roost_schema VALUES (72, 'failed script runs keep who deleted', 1796299828033);


--
-- Data for Name: script_failures; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: script_outbox; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.script_outbox VALUES (1, 0, NULL, 0);


--
-- Data for Name: script_outbox_subscriptions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.script_outbox_subscriptions VALUES ('notify', 'Post', 'create');


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tokens VALUES ('t1', 'u1', '\x010203', 'phone', 'ios', 10, 4000000000000, 10, '192.0.2.1', 1);


--
-- Name: objects_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.objects_id_seq', 5, true);


--
-- Name: tokens_issued_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tokens_issued_seq', 1, true);


--
-- Name: accounts accounts_email_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_email_unique UNIQUE (email_key);


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (user_guid);


--
-- Name: accounts accounts_user_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_user_name_unique UNIQUE (user_name_key);


--
-- Name: blob_chunks blob_chunks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_chunks
    ADD CONSTRAINT blob_chunks_pkey PRIMARY KEY (sha256, chunk_index);


--
-- Name: blob_claims blob_claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_claims
    ADD CONSTRAINT blob_claims_pkey PRIMARY KEY (sha256);


--
-- Name: blob_files blob_files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_files
    ADD CONSTRAINT blob_files_pkey PRIMARY KEY (sha256);


--
-- Name: blob_refs blob_refs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_refs
    ADD CONSTRAINT blob_refs_pkey PRIMARY KEY (collection, guid, member);


--
-- Name: change_counter change_counter_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.change_counter
    ADD CONSTRAINT change_counter_pkey PRIMARY KEY (id);


--
-- Name: changes changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changes
    ADD CONSTRAINT changes_pkey PRIMARY KEY (seq);


--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (user_guid, device_id);


--
-- Name: field_indexes field_indexes_index_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.field_indexes
    ADD CONSTRAINT field_indexes_index_name_key UNIQUE (index_name);


--
-- Name: field_indexes field_indexes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.field_indexes
    ADD CONSTRAINT field_indexes_pkey PRIMARY KEY (name);


--
-- Name: group_members group_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.group_members
    ADD CONSTRAINT group_members_pkey PRIMARY KEY (user_guid, group_guid);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key);


--
-- Name: objects objects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.objects
    ADD CONSTRAINT objects_pkey PRIMARY KEY (id);


--
-- Name: retired_group_guids retired_group_guids_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.retired_group_guids
    ADD CONSTRAINT retired_group_guids_pkey PRIMARY KEY (guid);


--
-- Name: roost_app_definition roost_app_definition_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.roost_app_definition
    ADD CONSTRAINT roost_app_definition_pkey PRIMARY KEY (id);


--
-- Name: roost_login_failures roost_login_failures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.roost_login_failures
    ADD CONSTRAINT roost_login_failures_pkey PRIMARY KEY (key);


--
-- Name: roost_meta roost_meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.roost_meta
    ADD CONSTRAINT roost_meta_pkey PRIMARY KEY (key);


--
-- Name: roost_schema roost_schema_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.roost_schema
    ADD CONSTRAINT roost_schema_pkey PRIMARY KEY (version);


--
-- Name: script_failures script_failures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.script_failures
    ADD CONSTRAINT script_failures_pkey PRIMARY KEY (seq, handler);


--
-- Name: script_outbox script_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.script_outbox
    ADD CONSTRAINT script_outbox_pkey PRIMARY KEY (id);


--
-- Name: script_outbox_subscriptions script_outbox_subscriptions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.script_outbox_subscriptions
    ADD CONSTRAINT script_outbox_subscriptions_pkey PRIMARY KEY (handler, collection, operation);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (id);


--
-- Name: tokens tokens_secret_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_secret_hash_key UNIQUE (secret_hash);


--
-- Name: blob_refs_by_sha256; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX blob_refs_by_sha256 ON public.blob_refs USING btree (sha256);


--
-- Name: field:Post:title; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX "field:Post:title" ON public.objects USING btree (collection, (((doc #> '{title}'::text[]) #>> '{}'::text[])) COLLATE "C", id);


--
-- Name: group_members_by_group; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX group_members_by_group ON public.group_members USING btree (group_guid);


--
-- Name: idempotency_keys_by_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_by_age ON public.idempotency_keys USING btree (created_at);


--
-- Name: objects_by_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX objects_by_created ON public.objects USING btree (collection, created_at, guid);


--
-- Name: objects_by_guid; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX objects_by_guid ON public.objects USING btree (collection, guid);


--
-- Name: objects_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX objects_by_id ON public.objects USING btree (collection, id);


--
-- Name: objects_by_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX objects_by_updated ON public.objects USING btree (collection, updated_at, guid);


--
-- Name: roost_login_failures_last; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX roost_login_failures_last ON public.roost_login_failures USING btree (last_failure);


--
-- Name: script_failures_by_state_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX script_failures_by_state_seq ON public.script_failures USING btree (state, seq);


--
-- Name: script_failures_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX script_failures_due ON public.script_failures USING btree (state, next_attempt);


--
-- Name: tokens_by_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tokens_by_user ON public.tokens USING btree (user_guid, device_id);


--
-- Name: objects change_log_objects; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER change_log_objects AFTER INSERT OR DELETE OR UPDATE ON public.objects DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.roost_log_change();


--
-- Name: tokens change_log_tokens; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER change_log_tokens AFTER DELETE ON public.tokens DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.roost_log_change();


--
-- Name: objects deactivation_revokes_tokens; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER deactivation_revokes_tokens AFTER UPDATE OF document ON public.objects FOR EACH ROW WHEN (((new.collection = 'FFUser'::text) AND ((new.doc -> 'active'::text) = 'false'::jsonb))) EXECUTE FUNCTION public.roost_deactivation_revokes_tokens();


--
-- Name: objects group_delete_retires_guid; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER group_delete_retires_guid AFTER DELETE ON public.objects FOR EACH ROW WHEN ((old.collection = 'FFUserGroup'::text)) EXECUTE FUNCTION public.roost_group_delete_retires_guid();


--
-- Name: objects retired_group_guid_stays_retired; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER retired_group_guid_stays_retired BEFORE INSERT ON public.objects FOR EACH ROW WHEN ((new.collection = 'FFUserGroup'::text)) EXECUTE FUNCTION public.roost_retired_group_guid_stays_retired();


--
-- Name: blob_chunks blob_chunks_sha256_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_chunks
    ADD CONSTRAINT blob_chunks_sha256_fkey FOREIGN KEY (sha256) REFERENCES public.blob_files(sha256) ON DELETE CASCADE;


--
-- Name: devices devices_user_guid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_user_guid_fkey FOREIGN KEY (user_guid) REFERENCES public.accounts(user_guid) ON DELETE CASCADE;


--
-- Name: tokens tokens_user_guid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_user_guid_fkey FOREIGN KEY (user_guid) REFERENCES public.accounts(user_guid) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict 0R719ybCfIdxyDXuH9bqgw8yA76Q43T6h6nVcJzM7LqdoZs2sCGiaQ2Ybktixdm

