"""The LAP controller's PostgreSQL schema (one schema per linked group).

Every rule that decides money lives here, in the database, so that one serialisable
decision orders and prices every event whichever process sends it:

- ``events`` is the inbox: a table's uplink INSERTs its link events, keyed by
  ``(table_id, seq)`` (the table's own ledger sequence number), so a resend is a no-op
  (``ON CONFLICT DO NOTHING``).  Row-level security lets a table role insert and read only
  rows carrying its own ``table_id``; no role but the LAP's owner may update or delete any row,
  and triggers make every record table append-only even for the owner.
- ``apply_event`` (an AFTER INSERT trigger, SECURITY DEFINER) applies each event to its level
  with the level's row locked (``SELECT ... FOR UPDATE``): a contribution adds
  ``wager × rate`` to the meter and ``wager × reserve_rate`` to the reserve; a hit claim takes
  its amount from the meter *as the database has it when the hit is decided*, in commit order,
  and a 100 % hit resets the level to ``reset`` plus the reserve (cf. N.J.A.C. 13:69E-1.39B,
  9 NYCRR 5321.18: the controller, never a table, calculates the amount and records the order of
  hits).  The meter is exact: ``value_num / den`` cents, ``den`` the common denominator of the
  level's rates; the sign shows ``value_num div den`` and the remainder is carried.
- Parameters (``levels``' seed/reset/rates/limit, ``members``) change only while
  ``link.state = 'stopped'`` (trigger ``guard_params``), and every change is recorded in
  ``param_changes`` (trigger ``record_params``).
- ``batches``: each batch of events an uplink sends names the table's ledger chain head and
  the table's own totals; trigger ``check_batch`` compares them with the rows the LAP holds and
  marks the table reconciled up to that sequence number, or records the mismatch.
- Every change is announced by ``pg_notify(<schema>, json)``: meter values (``t = "meter"``),
  hit answers (``"hit"``), reconciliations (``"reconciled"``/``"mismatch"``), heartbeats
  (``"hb"``) and link state (``"state"``).

Reconciliation identity, for every level, at every commit::

    value + reserve + overflow + Σ payouts(decided) ==
        seed + Σ resets + Σ contributions(wager × (rate + reserve_rate)) − Σ voided
"""

from __future__ import annotations

import re

SCHEMA_VERSION = 1

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


def check_name(name: str, what: str = "schema") -> str:
    if not _NAME.match(name):
        raise ValueError(f"{what} name {name!r}: use lower-case letters, digits and _ (max 41, letter first)")
    return name


def ddl(schema: str) -> str:
    """The whole schema, created in one transaction (idempotent only on an empty schema)."""
    s = check_name(schema)
    return _DDL.replace("@S", s)


_DDL = r"""
CREATE SCHEMA @S;
SET LOCAL search_path = @S, pg_temp;

CREATE TABLE schema_info (id boolean PRIMARY KEY DEFAULT true CHECK (id), version integer NOT NULL);

CREATE TABLE link (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    group_name text NOT NULL,
    state text NOT NULL DEFAULT 'stopped' CHECK (state IN ('stopped', 'running')),
    heartbeat_at timestamptz,
    lap_pid integer
);

CREATE TABLE param_changes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    by_role name NOT NULL DEFAULT session_user,
    what text NOT NULL,
    key text NOT NULL,
    old jsonb,
    new jsonb
);

CREATE TABLE levels (
    level text PRIMARY KEY,
    seed_cents bigint NOT NULL CHECK (seed_cents >= 0),
    reset_cents bigint NOT NULL CHECK (reset_cents >= 0),
    rate_num bigint NOT NULL,
    rate_den bigint NOT NULL,
    reserve_num bigint NOT NULL DEFAULT 0,
    reserve_den bigint NOT NULL DEFAULT 1,
    limit_cents bigint,
    at_limit text NOT NULL DEFAULT 'reserve' CHECK (at_limit IN ('reserve', 'freeze')),
    den bigint NOT NULL CHECK (den > 0),
    value_num numeric NOT NULL CHECK (value_num >= 0),
    reserve_acc numeric NOT NULL DEFAULT 0 CHECK (reserve_acc >= 0),
    overflow_acc numeric NOT NULL DEFAULT 0 CHECK (overflow_acc >= 0),
    hits bigint NOT NULL DEFAULT 0,
    version bigint NOT NULL DEFAULT 0,
    CHECK (rate_den > 0 AND rate_num >= 0 AND reserve_den > 0 AND reserve_num >= 0),
    CHECK (rate_num::numeric / rate_den + reserve_num::numeric / reserve_den <= 1),
    CHECK (den % rate_den = 0 AND den % reserve_den = 0),
    CHECK (limit_cents IS NULL OR limit_cents >= reset_cents)
);

CREATE TABLE members (
    table_id text PRIMARY KEY,
    role name NOT NULL UNIQUE,
    asset text NOT NULL,
    game text NOT NULL,
    reconciled_seq bigint NOT NULL DEFAULT 0,
    chain_head text,
    mismatch text,
    last_seen timestamptz
);

CREATE TABLE events (
    table_id text NOT NULL,
    seq bigint NOT NULL CHECK (seq > 0),
    kind text NOT NULL CHECK (kind IN ('contribution', 'void', 'hit', 'paid')),
    level text NOT NULL,
    data jsonb NOT NULL,
    table_time timestamptz,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, seq)
);

CREATE TABLE contributions (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    level text NOT NULL REFERENCES levels,
    round_no bigint NOT NULL,
    seat integer NOT NULL,
    wager_cents bigint NOT NULL CHECK (wager_cents > 0),
    rate_num bigint NOT NULL,
    rate_den bigint NOT NULL,
    reserve_num bigint NOT NULL,
    reserve_den bigint NOT NULL,
    den bigint NOT NULL,
    to_meter numeric NOT NULL,
    to_reserve numeric NOT NULL,
    to_overflow numeric NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, seq)
);

CREATE TABLE voids (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    of_seq bigint NOT NULL,
    level text NOT NULL,
    den bigint NOT NULL,
    amount numeric NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, seq),
    UNIQUE (table_id, of_seq),
    FOREIGN KEY (table_id, of_seq) REFERENCES contributions (table_id, seq)
);

CREATE TABLE hits (
    level text NOT NULL REFERENCES levels,
    order_no bigint NOT NULL,
    table_id text NOT NULL,
    seq bigint NOT NULL,
    round_no bigint NOT NULL,
    seat integer NOT NULL,
    hand text NOT NULL,
    fraction_num bigint NOT NULL,
    fraction_den bigint NOT NULL,
    meter_cents_before bigint NOT NULL,
    amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
    table_time timestamptz,
    decided_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (level, order_no),
    UNIQUE (table_id, seq)
);

CREATE TABLE reseeds (
    level text NOT NULL,
    order_no bigint NOT NULL,
    reset_cents bigint NOT NULL,
    den bigint NOT NULL,
    reserve_moved numeric NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (level, order_no),
    FOREIGN KEY (level, order_no) REFERENCES hits (level, order_no)
);

CREATE TABLE payouts (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    hit_seq bigint NOT NULL,
    cents bigint NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (table_id, seq),
    UNIQUE (table_id, hit_seq),
    FOREIGN KEY (table_id, hit_seq) REFERENCES hits (table_id, seq)
);

CREATE TABLE batches (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id text NOT NULL,
    last_seq bigint NOT NULL,
    events_total bigint NOT NULL,
    wagers_total bigint NOT NULL,
    chain_head text NOT NULL,
    verified boolean NOT NULL DEFAULT false,
    problem text,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- ------------------------------------------------------------------ functions

CREATE FUNCTION my_table() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ SELECT table_id FROM members WHERE role = session_user $$;

CREATE FUNCTION push(lv text, extra jsonb DEFAULT '{}') RETURNS void LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE r levels%ROWTYPE;
BEGIN
    SELECT * INTO r FROM levels WHERE level = lv;
    PERFORM pg_notify('@S', (jsonb_build_object(
        't', 'meter', 'level', lv, 'cents', div(r.value_num, r.den), 'version', r.version,
        'at', extract(epoch FROM clock_timestamp())) || extra)::text);
END $$;

CREATE FUNCTION apply_event() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE
    lv levels%ROWTYPE;
    c contributions%ROWTYPE;
    wager bigint; m numeric; r numeric; o numeric; room numeric; k numeric; short numeric;
    fnum bigint; fden bigint; cents bigint; amount bigint; ord bigint; moved numeric;
BEGIN
    SELECT * INTO lv FROM levels WHERE level = NEW.level FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'event %/%: no level %', NEW.table_id, NEW.seq, NEW.level USING ERRCODE = '22023';
    END IF;
    IF NEW.kind = 'contribution' THEN
        wager := (NEW.data->>'wager')::bigint;
        IF wager IS NULL OR wager <= 0 THEN
            RAISE EXCEPTION 'contribution %/%: wager must be > 0', NEW.table_id, NEW.seq USING ERRCODE = '22023';
        END IF;
        m := wager::numeric * lv.rate_num * (lv.den / lv.rate_den);
        r := wager::numeric * lv.reserve_num * (lv.den / lv.reserve_den);
        o := 0;
        IF lv.limit_cents IS NOT NULL THEN
            room := greatest(lv.limit_cents::numeric * lv.den - lv.value_num, 0);
            IF m > room THEN
                IF lv.at_limit = 'reserve' THEN r := r + (m - room); ELSE o := m - room; END IF;
                m := room;
            END IF;
        END IF;
        UPDATE levels SET value_num = value_num + m, reserve_acc = reserve_acc + r,
            overflow_acc = overflow_acc + o, version = version + 1 WHERE level = NEW.level;
        INSERT INTO contributions VALUES (NEW.table_id, NEW.seq, NEW.level,
            coalesce((NEW.data->>'round')::bigint, 0), coalesce((NEW.data->>'seat')::integer, 0), wager,
            lv.rate_num, lv.rate_den, lv.reserve_num, lv.reserve_den, lv.den, m, r, o);
        PERFORM push(NEW.level);
    ELSIF NEW.kind = 'void' THEN
        -- the contribution voided: by its seq, or by the round and seat it was made for
        SELECT x.* INTO c FROM contributions x WHERE x.table_id = NEW.table_id AND x.level = NEW.level
            AND CASE WHEN NEW.data ? 'of_seq' THEN x.seq = (NEW.data->>'of_seq')::bigint
                ELSE x.round_no = (NEW.data->>'round')::bigint AND x.seat = (NEW.data->>'seat')::integer END
            AND NOT EXISTS (SELECT 1 FROM voids v WHERE v.table_id = NEW.table_id AND v.of_seq = x.seq)
            ORDER BY x.seq LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'void %/%: no unvoided contribution % of this table', NEW.table_id, NEW.seq,
                NEW.data USING ERRCODE = '22023';
        END IF;
        k := lv.den / c.den;  -- den only grows, by multiples: exact
        short := greatest(c.to_reserve * k - lv.reserve_acc, 0);  -- reserve already moved in by a reset
        UPDATE levels SET value_num = value_num - c.to_meter * k - short,
            reserve_acc = reserve_acc - c.to_reserve * k + short,
            overflow_acc = overflow_acc - c.to_overflow * k, version = version + 1 WHERE level = NEW.level;
        INSERT INTO voids VALUES (NEW.table_id, NEW.seq, c.seq, NEW.level, c.den,
            c.to_meter + c.to_reserve + c.to_overflow);
        PERFORM push(NEW.level);
    ELSIF NEW.kind = 'hit' THEN
        fnum := (NEW.data->>'fraction_num')::bigint;
        fden := (NEW.data->>'fraction_den')::bigint;
        IF fnum IS NULL OR fden IS NULL OR fnum <= 0 OR fden <= 0 OR fnum > fden THEN
            RAISE EXCEPTION 'hit %/%: meter fraction must be in (0, 1]', NEW.table_id, NEW.seq
                USING ERRCODE = '22023';
        END IF;
        cents := div(lv.value_num, lv.den);
        amount := div(fnum::numeric * cents, fden);
        ord := lv.hits + 1;
        moved := 0;
        IF fnum = fden THEN moved := lv.reserve_acc; END IF;
        UPDATE levels SET value_num = value_num - amount::numeric * den
                + CASE WHEN fnum = fden THEN reset_cents::numeric * den + reserve_acc ELSE 0 END,
            reserve_acc = reserve_acc - moved, hits = ord, version = version + 1
            WHERE level = NEW.level;
        INSERT INTO hits VALUES (NEW.level, ord, NEW.table_id, NEW.seq,
            coalesce((NEW.data->>'round')::bigint, 0), coalesce((NEW.data->>'seat')::integer, 0),
            coalesce(NEW.data->>'hand', ''), fnum, fden, cents, amount, NEW.table_time);
        IF fnum = fden THEN
            INSERT INTO reseeds VALUES (NEW.level, ord, lv.reset_cents, lv.den, moved);
        END IF;
        PERFORM push(NEW.level, jsonb_build_object('hit', jsonb_build_object(
            'table', NEW.table_id, 'seq', NEW.seq, 'order', ord, 'amount', amount,
            'asset', (SELECT asset FROM members WHERE table_id = NEW.table_id))));
    ELSIF NEW.kind = 'paid' THEN
        SELECT amount_cents INTO amount FROM hits WHERE table_id = NEW.table_id
            AND seq = (NEW.data->>'hit_seq')::bigint;
        IF NOT FOUND OR amount <> (NEW.data->>'cents')::bigint THEN
            RAISE EXCEPTION 'paid %/%: no hit % of this table answered % cents', NEW.table_id, NEW.seq,
                NEW.data->>'hit_seq', NEW.data->>'cents' USING ERRCODE = '22023';
        END IF;
        INSERT INTO payouts VALUES (NEW.table_id, NEW.seq, (NEW.data->>'hit_seq')::bigint, amount);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER apply_event AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION apply_event();

CREATE FUNCTION check_batch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE n bigint; w bigint;
BEGIN
    SELECT count(*) INTO n FROM events WHERE table_id = NEW.table_id AND seq <= NEW.last_seq;
    SELECT coalesce(sum(wager_cents), 0) INTO w FROM contributions
        WHERE table_id = NEW.table_id AND seq <= NEW.last_seq;
    IF n = NEW.events_total AND w = NEW.wagers_total THEN
        NEW.verified := true;
        UPDATE members SET reconciled_seq = greatest(reconciled_seq, NEW.last_seq), chain_head = NEW.chain_head,
            mismatch = NULL, last_seen = clock_timestamp() WHERE table_id = NEW.table_id;
        PERFORM pg_notify('@S', jsonb_build_object('t', 'reconciled', 'table', NEW.table_id,
            'seq', NEW.last_seq)::text);
    ELSE
        NEW.problem := format('table says %s events, %s cents wagered up to seq %s; the LAP holds %s, %s',
            NEW.events_total, NEW.wagers_total, NEW.last_seq, n, w);
        UPDATE members SET mismatch = NEW.problem WHERE table_id = NEW.table_id;
        PERFORM pg_notify('@S', jsonb_build_object('t', 'mismatch', 'table', NEW.table_id,
            'problem', NEW.problem)::text);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_batch BEFORE INSERT ON batches FOR EACH ROW EXECUTE FUNCTION check_batch();

CREATE FUNCTION table_seen() RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ UPDATE members SET last_seen = clock_timestamp() WHERE role = session_user $$;

CREATE FUNCTION heartbeat() RETURNS void LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    UPDATE link SET heartbeat_at = clock_timestamp(), lap_pid = pg_backend_pid();
    PERFORM pg_notify('@S', jsonb_build_object('t', 'hb', 'state', (SELECT state FROM link),
        'meters', (SELECT coalesce(jsonb_object_agg(level, div(value_num, den)), '{}') FROM levels),
        'versions', (SELECT coalesce(jsonb_object_agg(level, version), '{}') FROM levels),
        'at', extract(epoch FROM clock_timestamp()))::text);
END $$;

CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%: records are append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = '42501';
END $$;

CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON contributions FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON voids FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON hits FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON reseeds FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON payouts FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON batches FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON param_changes FOR EACH ROW EXECUTE FUNCTION append_only();

-- parameters: only with the link stopped, every change recorded
CREATE FUNCTION guard_params() RETURNS trigger LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE o jsonb; n jsonb; k text; acc text[];
BEGIN
    -- the accounts (moved by events) are not parameters
    IF TG_TABLE_NAME = 'levels' THEN
        acc := '{value_num,reserve_acc,overflow_acc,hits,version,den}';
    ELSE
        acc := '{reconciled_seq,chain_head,mismatch,last_seen}';
    END IF;
    o := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) - acc END;
    n := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE to_jsonb(NEW) - acc END;
    k := CASE WHEN TG_OP = 'DELETE' THEN coalesce(o->>'level', o->>'table_id')
        ELSE coalesce(n->>'level', n->>'table_id') END;
    IF o IS DISTINCT FROM n THEN
        IF (SELECT state FROM link) <> 'stopped' THEN
            RAISE EXCEPTION '%: % changes only with the link stopped', TG_TABLE_NAME, k USING ERRCODE = '55000';
        END IF;
        INSERT INTO param_changes (what, key, old, new) VALUES (TG_TABLE_NAME, k, o, n);
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER guard_params BEFORE INSERT OR UPDATE OR DELETE ON levels
    FOR EACH ROW EXECUTE FUNCTION guard_params();
CREATE TRIGGER guard_params BEFORE INSERT OR UPDATE OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION guard_params();

CREATE FUNCTION record_state() RETURNS trigger LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    IF OLD.state IS DISTINCT FROM NEW.state THEN
        INSERT INTO param_changes (what, key, old, new)
            VALUES ('link', 'state', to_jsonb(OLD.state), to_jsonb(NEW.state));
        PERFORM pg_notify('@S', jsonb_build_object('t', 'state', 'state', NEW.state)::text);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER record_state BEFORE UPDATE ON link FOR EACH ROW EXECUTE FUNCTION record_state();

-- ------------------------------------------------------------------ privileges

REVOKE ALL ON ALL TABLES IN SCHEMA @S FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA @S FROM PUBLIC;
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE batches ENABLE ROW LEVEL SECURITY;
ALTER TABLE members ENABLE ROW LEVEL SECURITY;
ALTER TABLE contributions ENABLE ROW LEVEL SECURITY;
ALTER TABLE voids ENABLE ROW LEVEL SECURITY;
ALTER TABLE hits ENABLE ROW LEVEL SECURITY;
ALTER TABLE payouts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON events USING (table_id = my_table()) WITH CHECK (table_id = my_table());
CREATE POLICY own ON batches USING (table_id = my_table()) WITH CHECK (table_id = my_table());
CREATE POLICY own ON members USING (table_id = my_table());
CREATE POLICY own ON contributions USING (table_id = my_table());
CREATE POLICY own ON voids USING (table_id = my_table());
CREATE POLICY own ON payouts USING (table_id = my_table());
-- hits are public on the link (the common meter shows the winning table's asset number)
CREATE POLICY all_read ON hits FOR SELECT USING (true);

INSERT INTO schema_info VALUES (true, @VERSION);
"""

_DDL = _DDL.replace("@VERSION", str(SCHEMA_VERSION))


def grants(schema: str, role: str) -> str:
    """What a table's role may do: insert and read its own events and batches, read the meters
    and its own records, report itself seen.  Nothing else (no UPDATE or DELETE anywhere)."""
    s, r = check_name(schema), check_name(role, "role")
    return f"""
GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT, INSERT ON {s}.events, {s}.batches TO {r};
GRANT SELECT ON {s}.levels, {s}.link, {s}.members, {s}.contributions, {s}.voids, {s}.hits, {s}.payouts TO {r};
GRANT EXECUTE ON FUNCTION {s}.my_table(), {s}.table_seen() TO {r};
"""


def floor_ddl(schema: str) -> str:
    """The floor view's additions (issue 16), applied at every LAP start (idempotent, so a
    schema created before them gets them too): each table's reported status (state, round,
    linked wager open or closed and why, tilts), the floor staff's login audit (append-only) and
    their lock-outs after repeated failures (per person, ended by the database's clock), and
    ``asset_of`` (the winning table's asset number, read by every table's uplink for its sign)."""
    s = check_name(schema)
    return _FLOOR_DDL.replace("@S", s)


_FLOOR_DDL = r"""
CREATE TABLE IF NOT EXISTS @S.table_status (
    table_id text PRIMARY KEY,
    state text NOT NULL,
    round_no bigint NOT NULL,
    progressive_open boolean NOT NULL,
    reason text NOT NULL,
    tilts jsonb NOT NULL,
    at timestamptz NOT NULL
);

ALTER TABLE @S.table_status ADD COLUMN IF NOT EXISTS sign text NOT NULL DEFAULT '';

-- issue 25: each change of a table's tilts or linked wager, for the floor view's tilt and event log
CREATE TABLE IF NOT EXISTS @S.table_status_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    table_id text NOT NULL,
    state text NOT NULL,
    round_no bigint NOT NULL,
    progressive_open boolean NOT NULL,
    reason text NOT NULL,
    tilts jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS table_status_log_at ON @S.table_status_log (at);
CREATE OR REPLACE TRIGGER append_only BEFORE UPDATE OR DELETE ON @S.table_status_log
    FOR EACH ROW EXECUTE FUNCTION @S.append_only();

-- issue 25: a pending hit acknowledged on the floor view, under the person's name (append-only;
-- it validates nothing: validation stays at the table, § 670a.11(h)(3)(i)(B)(III))
CREATE TABLE IF NOT EXISTS @S.floor_acks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    level text NOT NULL,
    order_no bigint NOT NULL,
    person text NOT NULL,
    role text NOT NULL,
    addr text NOT NULL,
    FOREIGN KEY (level, order_no) REFERENCES @S.hits (level, order_no)
);
CREATE OR REPLACE TRIGGER append_only BEFORE UPDATE OR DELETE ON @S.floor_acks
    FOR EACH ROW EXECUTE FUNCTION @S.append_only();

-- the floor view's reads of the gaming day and of a range of days
CREATE INDEX IF NOT EXISTS contributions_at ON @S.contributions (at);
CREATE INDEX IF NOT EXISTS hits_decided_at ON @S.hits (decided_at);

CREATE TABLE IF NOT EXISTS @S.floor_logins (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    person text NOT NULL,
    role text,
    ok boolean NOT NULL,
    why text NOT NULL,
    addr text NOT NULL
);

CREATE OR REPLACE TRIGGER append_only BEFORE UPDATE OR DELETE ON @S.floor_logins
    FOR EACH ROW EXECUTE FUNCTION @S.append_only();

-- the floor view's lock-out per person (controller/link/floorlock.py): failures counted and the
-- lock-out's end on the database's clock, so a restart of the LAP process does not lift it (the
-- attempts themselves stay in floor_logins)
CREATE TABLE IF NOT EXISTS @S.floor_lockouts (
    person text PRIMARY KEY,
    failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    locked_until timestamptz,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- names not on the staff file are counted too, their rows capped (floorlock.py MAX_UNKNOWN)
ALTER TABLE @S.floor_lockouts ADD COLUMN IF NOT EXISTS known boolean NOT NULL DEFAULT true;
CREATE INDEX IF NOT EXISTS floor_lockouts_unknown ON @S.floor_lockouts (at) WHERE NOT known;

-- a table reports its own status only (my_table(): the role it logs in as); every field bounded
-- (issue 25: one table's 5 MB tilts must not make every floor picture 5 MB): 16 tilts, their
-- names 40 characters, their reasons 160; the state 40, the reason 200, the sign's line 80
CREATE OR REPLACE FUNCTION @S.bounded_tilts(t jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
SET search_path = @S, pg_temp AS $$
    SELECT coalesce(jsonb_object_agg(left(k, 40), left(coalesce(v #>> '{}', ''), 160)), '{}'::jsonb)
    FROM (SELECT key AS k, value AS v FROM jsonb_each(CASE WHEN jsonb_typeof(t) = 'object' THEN t
        ELSE '{}'::jsonb END) ORDER BY key LIMIT 16) x $$;

CREATE OR REPLACE FUNCTION @S.report_status(st jsonb) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
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

-- the winning table's asset number, for every linked table's sign (a table reads only its own
-- ``members`` row; asset numbers are no secret on the link, cf. the ``all_read`` policy on hits)
CREATE OR REPLACE FUNCTION @S.asset_of(t text) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ SELECT asset FROM members WHERE table_id = t $$;

REVOKE ALL ON @S.table_status, @S.floor_logins, @S.floor_lockouts, @S.table_status_log, @S.floor_acks FROM PUBLIC;
REVOKE ALL ON FUNCTION @S.report_status(jsonb), @S.asset_of(text), @S.bounded_tilts(jsonb) FROM PUBLIC;
"""


def floor_grants(schema: str, role: str) -> str:
    s, r = check_name(schema), check_name(role, "role")
    return f"GRANT EXECUTE ON FUNCTION {s}.report_status(jsonb), {s}.asset_of(text) TO {r};"
