"""The floor view's part of the LAP schema (part of controller/lap/schema.py since
schema version 2): each table's reported status (state, round, linked wager open or closed and
why, tilts), the floor staff's login audit (append-only) and their lock-outs after repeated
failures (per person, ended by the database's clock), and ``asset_of`` (the winning table's
asset number)."""

from __future__ import annotations

FLOOR_DDL = r"""
CREATE TABLE table_status (
    table_id text PRIMARY KEY,
    state text NOT NULL,
    round_no bigint NOT NULL,
    progressive_open boolean NOT NULL,
    reason text NOT NULL,
    tilts jsonb NOT NULL,
    at timestamptz NOT NULL,
    sign text NOT NULL DEFAULT ''  -- what the table's sign's message line says
);

-- each change of a table's tilts or linked wager, for the floor view's tilt and event log
CREATE TABLE table_status_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    table_id text NOT NULL,
    state text NOT NULL,
    round_no bigint NOT NULL,
    progressive_open boolean NOT NULL,
    reason text NOT NULL,
    tilts jsonb NOT NULL
);
CREATE INDEX table_status_log_at ON table_status_log (at);
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON table_status_log FOR EACH ROW EXECUTE FUNCTION append_only();

-- a pending hit acknowledged on the floor view, under the person's name (append-only;
-- it validates nothing: validation stays at the table, § 670a.11(h)(3)(i)(B)(III))
CREATE TABLE floor_acks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    level text NOT NULL,
    order_no bigint NOT NULL,
    person text NOT NULL,
    role text NOT NULL,
    addr text NOT NULL,
    FOREIGN KEY (level, order_no) REFERENCES hits (level, order_no)
);
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON floor_acks FOR EACH ROW EXECUTE FUNCTION append_only();

-- the floor view's reads of the gaming day and of a range of days
CREATE INDEX contributions_at ON contributions (at);
CREATE INDEX hits_decided_at ON hits (decided_at);

CREATE TABLE floor_logins (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    person text NOT NULL,
    role text,
    ok boolean NOT NULL,
    why text NOT NULL,
    addr text NOT NULL
);

CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON floor_logins FOR EACH ROW EXECUTE FUNCTION append_only();

-- the floor view's lock-out per person (controller/lap/floorlock.py): failures counted and the
-- lock-out's end on the database's clock, so a restart of the LAP process does not lift it (the
-- attempts themselves stay in floor_logins)
CREATE TABLE floor_lockouts (
    person text PRIMARY KEY,
    failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    locked_until timestamptz,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- names not on the staff file are counted too, their rows capped (floorlock.py MAX_UNKNOWN)
    known boolean NOT NULL DEFAULT true
);
CREATE INDEX floor_lockouts_unknown ON floor_lockouts (at) WHERE NOT known;

-- a table reports its own status only (my_table(): the role it logs in as); every field bounded
-- (one table's 5 MB tilts must not make every floor picture 5 MB): 16 tilts, their
-- names 40 characters, their reasons 160; the state 40, the reason 200, the sign's line 80
CREATE FUNCTION bounded_tilts(t jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
SET search_path = @S, pg_temp AS $$
    SELECT coalesce(jsonb_object_agg(left(k, 40), left(coalesce(v #>> '{}', ''), 160)), '{}'::jsonb)
    FROM (SELECT key AS k, value AS v FROM jsonb_each(CASE WHEN jsonb_typeof(t) = 'object' THEN t
        ELSE '{}'::jsonb END) ORDER BY key LIMIT 16) x $$;

CREATE FUNCTION report_status(st jsonb) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table(); old table_status%ROWTYPE; nw table_status%ROWTYPE;
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'report_status: % is not a member table', session_user USING ERRCODE = '42501';
    END IF;
    IF jsonb_typeof(st->'tilts') IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'report_status: tilts must be an object' USING ERRCODE = '22023';
    END IF;
    SELECT * INTO old FROM table_status WHERE table_id = t;
    INSERT INTO table_status (table_id, state, round_no, progressive_open, reason, tilts, at, sign)
    VALUES (t, left(st->>'state', 40), (st->>'round')::bigint, (st->>'open')::boolean,
        left(coalesce(st->>'reason', ''), 200), bounded_tilts(st->'tilts'), clock_timestamp(),
        left(coalesce(st->>'sign', ''), 80))
    ON CONFLICT (table_id) DO UPDATE SET state = excluded.state, round_no = excluded.round_no,
        progressive_open = excluded.progressive_open, reason = excluded.reason, tilts = excluded.tilts,
        at = excluded.at, sign = excluded.sign
    RETURNING * INTO nw;
    -- the tilt and event log: a tilt raised or cleared, the linked wager opened or closed
    IF old.table_id IS NULL OR old.tilts IS DISTINCT FROM nw.tilts
        OR old.progressive_open IS DISTINCT FROM nw.progressive_open
        OR (old.state = 'tilt') IS DISTINCT FROM (nw.state = 'tilt') THEN
        INSERT INTO table_status_log (table_id, state, round_no, progressive_open, reason, tilts)
        VALUES (t, nw.state, nw.round_no, nw.progressive_open, nw.reason, nw.tilts);
    END IF;
END $$;

-- the winning table's asset number (a table reads only its own ``members`` row; asset numbers
-- are no secret on the link, cf. the ``all_read`` policy on hits)
CREATE FUNCTION asset_of(t text) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ SELECT asset FROM members WHERE table_id = t $$;
"""
