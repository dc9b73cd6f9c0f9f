"""The floor view's part of the LAP schema (issue 16; part of controller/link/schema.py since
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
    at timestamptz NOT NULL
);

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

-- the floor view's lock-out per person (controller/link/floorlock.py): failures counted and the
-- lock-out's end on the database's clock, so a restart of the LAP process does not lift it (the
-- attempts themselves stay in floor_logins)
CREATE TABLE floor_lockouts (
    person text PRIMARY KEY,
    failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    locked_until timestamptz,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- a table reports its own status only (my_table(): the role it logs in as); bounded text
CREATE FUNCTION report_status(st jsonb) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table();
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'report_status: % is not a member table', session_user USING ERRCODE = '42501';
    END IF;
    IF jsonb_typeof(st->'tilts') IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'report_status: tilts must be an object' USING ERRCODE = '22023';
    END IF;
    INSERT INTO table_status VALUES (t, left(st->>'state', 40), (st->>'round')::bigint, (st->>'open')::boolean,
        left(coalesce(st->>'reason', ''), 200), st->'tilts', clock_timestamp())
    ON CONFLICT (table_id) DO UPDATE SET state = excluded.state, round_no = excluded.round_no,
        progressive_open = excluded.progressive_open, reason = excluded.reason, tilts = excluded.tilts,
        at = excluded.at;
END $$;

-- the winning table's asset number (a table reads only its own ``members`` row; asset numbers
-- are no secret on the link, cf. the ``all_read`` policy on hits)
CREATE FUNCTION asset_of(t text) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ SELECT asset FROM members WHERE table_id = t $$;
"""
