"""Who wrote a link record, in PL/pgSQL (part of the schema, controller/lap/schema.py).

A table's role and its password prove nothing about a row: anyone who holds the password (it
sits in ``uplink.toml``) can insert.  So every event and batch head carries an HMAC-SHA256 made
by the table's uplink under the table's **link key** (controller/lap/linkauth.py), and the
database checks it in a BEFORE INSERT trigger, before the money rules run:

- ``link_keys``: every link key of every table (its HMAC pads, as ``lap_key``), numbered; row
  level security on and no grant to any table role, so no table reads another's key (nor its
  own).  ``tablectl lap --enrol-table`` adds one (a rotation: the old key stays good for the
  records made before the new key's first record, so nothing in flight is lost), ``--revoke-key``
  revokes one.
- ``authenticate_event`` / ``authenticate_batch``: a record whose MAC does not verify under the
  named key of its table (none, another table's, another group's, another seq's, a revoked key,
  a replaced key after its successor's first record) is **not stored**: it is recorded in
  ``refusals`` (kind ``forged`` or ``forged-batch``) and closes that table's linked wager with the
  reason (shown on the floor view); the genuine record for that seq can still arrive.
- ``report_foreign``: the table's uplink found a record the LAP holds for this table that its
  ledger does not (controller/uplink/uplink.py ``_check_foreign``): recorded (kind ``foreign``),
  the table closed; ``apply_paid`` never counts such a hit as paid.

The MAC's message is ``jsonb_build_array(...)::text`` of the row's own fields: the uplink renders
the same text (controller/lap/linkauth.py ``jsonb_text``).
"""

from __future__ import annotations

#: the forged records of one table recorded (of each kind): the rest close nothing more
FORGED_KEPT = 1000

AUTH_DDL = r"""
CREATE TABLE link_keys (
    table_id text NOT NULL,
    key_no integer NOT NULL CHECK (key_no > 0),
    ki bytea NOT NULL CHECK (octet_length(ki) = 64),
    ko bytea NOT NULL CHECK (octet_length(ko) = 64),
    made_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- the first record accepted under it: from there on the earlier keys are not (a rotation)
    first_seq bigint,
    -- the first record of a later key of the table: this key takes no record from there on
    replaced_from bigint,
    revoked_at timestamptz,
    PRIMARY KEY (table_id, key_no)
);
ALTER TABLE link_keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE events ADD COLUMN key_no integer, ADD COLUMN auth text,
    ADD CONSTRAINT events_auth_bounded CHECK (key_no > 0 AND auth ~ '^[0-9a-f]{64}$');
ALTER TABLE batches ADD COLUMN key_no integer, ADD COLUMN auth text,
    ADD CONSTRAINT batches_auth_bounded CHECK (key_no > 0 AND auth ~ '^[0-9a-f]{64}$');

-- HMAC-SHA256 of msg under a key's pads, hex
CREATE FUNCTION link_mac(ki bytea, ko bytea, msg text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT pg_catalog.encode(pg_catalog.sha256(ko || pg_catalog.sha256(ki || pg_catalog.convert_to(msg, 'UTF8'))),
        'hex')
$$;

-- what a table's uplink signs for an event (controller/lap/linkauth.py event_message)
CREATE FUNCTION event_message(ev events) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.jsonb_build_array('event', '@S', ev.table_id, ev.seq, ev.kind, ev.level, ev.key_no,
        (extract(epoch FROM ev.table_time) * 1000000)::bigint, ev.data)::text
$$;

CREATE FUNCTION batch_message(b batches) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.jsonb_build_array('batch', '@S', b.table_id, b.last_seq, b.events_total, b.wagers_total,
        b.chain_head, b.key_no)::text
$$;

-- why a record of table t at seq s, signed ``auth`` under key n over msg, is not the table's, or NULL
-- (no SET clause: only the SECURITY DEFINER triggers below call it, and their search_path is its own)
CREATE FUNCTION auth_refusal(t text, n integer, s bigint, auth text, msg text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE k link_keys%ROWTYPE;
BEGIN
    IF auth IS NULL OR n IS NULL THEN
        RETURN 'it carries no authenticator (a table''s uplink signs every record with the table''s link key)';
    END IF;
    SELECT * INTO k FROM link_keys WHERE table_id = t AND key_no = n;
    IF NOT FOUND THEN
        RETURN format('this table has no link key %s', n);
    END IF;
    IF k.revoked_at IS NOT NULL THEN
        RETURN format('link key %s of this table was revoked at %s', n, k.revoked_at);
    END IF;
    IF k.replaced_from < s THEN
        RETURN format('link key %s of this table was replaced by a later key from record %s on', n, k.replaced_from);
    END IF;
    IF auth IS DISTINCT FROM link_mac(k.ki, k.ko, msg) THEN
        RETURN format('its authenticator does not verify under this table''s link key %s (written without the key, '
            'or altered, or another table''s or another record''s)', n);
    END IF;
    IF k.first_seq IS NULL OR k.first_seq > s THEN
        UPDATE link_keys SET first_seq = s WHERE table_id = t AND key_no = n;
        UPDATE link_keys SET replaced_from = s WHERE table_id = t AND key_no < n
            AND (replaced_from IS NULL OR replaced_from > s);
    END IF;
    RETURN NULL;
END $$;

-- a record that is not the table's: recorded, not stored, the table's linked wager closed.  The
-- first @KEPT of a table are recorded (its password holder could insert forged rows for ever: what
-- one role stores is not the whole pit's to carry); the table is closed by the first
CREATE FUNCTION refuse_forged(t text, s bigint, k text, lvl text, why text, d jsonb) RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    IF (SELECT count(*) FROM (SELECT 1 FROM refusals r WHERE r.table_id = t AND r.kind = k LIMIT @KEPT) x) < @KEPT THEN
        INSERT INTO refusals (table_id, seq, kind, level, reason, data) VALUES (t, s, k, lvl, why,
            CASE WHEN octet_length(d::text) <= 2048 THEN d END) ON CONFLICT DO NOTHING;
    END IF;
    UPDATE members SET closed = coalesce(closed, format('the LAP refused record %s (%s) as not this table''s: %s',
        s, k, why)) WHERE table_id = t;
    PERFORM pg_notify('@S', jsonb_build_object('t', 'refused', 'table', t)::text);
END $$;

CREATE FUNCTION authenticate_event() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE me text := my_table(); why text;
BEGIN
    IF me IS NOT NULL AND NEW.table_id IS DISTINCT FROM me THEN
        RETURN NEW;  -- another table's row: its row-level policy refuses it (checked after this trigger)
    END IF;
    why := auth_refusal(NEW.table_id, NEW.key_no, NEW.seq, NEW.auth, event_message(NEW));
    IF why IS NULL THEN
        RETURN NEW;
    END IF;
    PERFORM refuse_forged(NEW.table_id, NEW.seq, 'forged', left(NEW.level, 64),
        format('%s record: %s', left(NEW.kind, 20), why), NEW.data);
    RETURN NULL;
END $$;

CREATE TRIGGER authenticate_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION authenticate_event();

CREATE FUNCTION authenticate_batch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE me text := my_table(); why text;
BEGIN
    IF me IS NOT NULL AND NEW.table_id IS DISTINCT FROM me THEN
        RETURN NEW;
    END IF;
    why := auth_refusal(NEW.table_id, NEW.key_no, NEW.last_seq, NEW.auth, batch_message(NEW));
    IF why IS NULL THEN
        RETURN NEW;
    END IF;
    PERFORM refuse_forged(NEW.table_id, NEW.last_seq, 'forged-batch', NULL, 'batch head: ' || why,
        jsonb_build_object('events', NEW.events_total, 'wagers', NEW.wagers_total, 'head', left(NEW.chain_head, 100)));
    RETURN NULL;
END $$;

-- before check_batch (triggers of one event fire in name order)
CREATE TRIGGER authenticate_batch BEFORE INSERT ON batches FOR EACH ROW EXECUTE FUNCTION authenticate_batch();

-- the table's uplink found a record the LAP holds for this table that its ledger does not hold
-- (or holds otherwise): recorded, the table closed; such a hit is never counted as paid
CREATE FUNCTION report_foreign(s bigint, problem text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table();
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'report_foreign: % is not a member table', session_user USING ERRCODE = '42501';
    END IF;
    INSERT INTO refusals (table_id, seq, kind, reason) VALUES (t, s, 'foreign', left(problem, 300))
        ON CONFLICT DO NOTHING;
    UPDATE members SET closed = coalesce(closed, format('the LAP holds record %s of this table, which its ledger '
        'does not: %s', s, left(problem, 200))) WHERE table_id = t;
    PERFORM pg_notify('@S', jsonb_build_object('t', 'refused', 'table', t)::text);
END $$;

-- a hit the table's ledger does not hold is not counted as paid
CREATE FUNCTION foreign_hit(t text, hs bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM @S.refusals r WHERE r.table_id = t AND r.seq = hs AND r.kind = 'foreign')
$$;
""".replace("@KEPT", str(FORGED_KEPT))

#: the grants a table's role gets in addition (controller/lap/schema.py ``grants``)
AUTH_GRANTS = "GRANT EXECUTE ON FUNCTION {s}.report_foreign(bigint, text) TO {r};\n"
