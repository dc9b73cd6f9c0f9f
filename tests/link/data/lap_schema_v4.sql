-- The LAP's schema as release 4 (schema version 4) installs it, @S its name; then, after the marker
-- line, the grants it gives a table's role @R (controller/lap/schema.py of that release: the migration's test)

CREATE SCHEMA @S;
SET LOCAL search_path = @S, pg_temp;

CREATE TABLE schema_info (id boolean PRIMARY KEY DEFAULT true CHECK (id), version integer NOT NULL);

CREATE TABLE link (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    group_name text NOT NULL,
    state text NOT NULL DEFAULT 'stopped' CHECK (state IN ('stopped', 'running', 'inoperable')),
    heartbeat_at timestamptz,
    lap_pid integer,
    reason text,  -- why the link is inoperable (every table closed, the floor view shows it)
    replication text  -- the LAP's last replication check (the floor view and the tables read it)
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
    -- N.J.A.C. 13:69E-1.39A(a): the "unreasonable contribution" limit; lap.toml, no default
    max_wager_cents bigint NOT NULL CHECK (max_wager_cents > 0),
    -- the paytable's percentage-of-meter pays, as reduced fractions 'num/den'
    meter_pays text[] NOT NULL CHECK (cardinality(meter_pays) > 0),
    rate_version bigint NOT NULL DEFAULT 1,
    den bigint NOT NULL CHECK (den > 0),
    value_num numeric NOT NULL CHECK (value_num >= 0),
    reserve_acc numeric NOT NULL DEFAULT 0 CHECK (reserve_acc >= 0),
    overflow_acc numeric NOT NULL DEFAULT 0 CHECK (overflow_acc >= 0),
    -- the identity's right side, kept running: (seed + resets) × den + contributions − voids
    inflow_num numeric NOT NULL,
    paid_cents bigint NOT NULL DEFAULT 0,
    hits bigint NOT NULL DEFAULT 0,
    version bigint NOT NULL DEFAULT 0,
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (rate_den > 0 AND rate_num >= 0 AND reserve_den > 0 AND reserve_num >= 0),
    CHECK (rate_num::numeric / rate_den + reserve_num::numeric / reserve_den <= 1),
    CHECK (den % rate_den = 0 AND den % reserve_den = 0),
    CHECK (limit_cents IS NULL OR limit_cents >= reset_cents)
);

-- every rate a level ever had (version 1 at its creation, one more at each change)
CREATE TABLE rates (
    level text NOT NULL,
    version bigint NOT NULL,
    rate_num bigint NOT NULL,
    rate_den bigint NOT NULL,
    reserve_num bigint NOT NULL,
    reserve_den bigint NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (level, version)
);

CREATE TABLE members (
    table_id text PRIMARY KEY,
    role name NOT NULL UNIQUE,
    asset text NOT NULL,
    game text NOT NULL,
    reconciled_seq bigint NOT NULL DEFAULT 0,
    chain_head text,
    mismatch text,
    closed text,  -- a refusal closed this table's linked wager (until the operator reopens it)
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
    PRIMARY KEY (table_id, seq),
    -- every field a table writes, bounded in bytes (a genuine event is a few hundred): what one
    -- role stores is not the whole pit's to read or carry
    CONSTRAINT events_bounded CHECK (octet_length(table_id) <= 64 AND octet_length(level) <= 64
        AND pg_catalog.jsonb_typeof(data) = 'object' AND octet_length(data::text) <= 2048
        AND octet_length(coalesce(data ->> 'hand', '')) <= 200)
);

CREATE TABLE contributions (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    level text NOT NULL REFERENCES levels,
    round_no bigint NOT NULL,
    seat integer NOT NULL,
    wager_cents bigint NOT NULL CHECK (wager_cents > 0),
    rate_version bigint NOT NULL,
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
CREATE INDEX contributions_round ON contributions (table_id, level, round_no, seat);

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
    -- the LAP's proof that it decided this amount for this claim (``hit_proof``): the table keeps
    -- it with its payment, and a LAP that lost the hit takes the amount back only with it
    proof text,
    PRIMARY KEY (level, order_no),
    UNIQUE (table_id, seq),
    UNIQUE (table_id, level, round_no, seat)  -- one claim per (round, seat)
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

-- every event the LAP refused (kept in events, applied nowhere), and every ledger record an
-- uplink found it could not verify (kind 'ledger'): each closes its table's linked wager
CREATE TABLE refusals (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    level text,
    reason text NOT NULL,
    data jsonb,
    by_role name NOT NULL DEFAULT session_user,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX refusals_once ON refusals (table_id, seq, kind);

-- what the LAP holds of each table, kept running by apply_event (every event inserted, applied
-- or refused): the batch check reads this row instead of counting the table's history
CREATE TABLE held (
    table_id text PRIMARY KEY,
    events bigint NOT NULL DEFAULT 0,
    wagers numeric NOT NULL DEFAULT 0,
    max_seq bigint NOT NULL DEFAULT 0
);

-- a table found the LAP behind its ledger, its database another one, or re-established a hit it
-- had paid (issue 22): recorded by the table's uplink, shown on the floor view
CREATE TABLE recoveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('lap-behind', 'identity-changed', 'hit-restored', 'caught-up')),
    detail text NOT NULL,
    seq bigint,
    level text,
    cents bigint,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
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
    received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- "seq:" and a MAC: a genuine head is under 100 bytes
    CONSTRAINT batches_bounded CHECK (octet_length(table_id) <= 64 AND octet_length(chain_head) <= 100)
);

-- the key of the LAP's proofs (``hit_proof``), made at install: the HMAC-SHA256 key xor its inner
-- and outer pads.  No role but the owner reads it
CREATE TABLE lap_key (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    ki bytea NOT NULL CHECK (octet_length(ki) = 64),
    ko bytea NOT NULL CHECK (octet_length(ko) = 64)
);

-- every table session the LAP ended or whose statement it cancelled (controller/lap/guard.py):
-- it held a level's lock others waited for, sat in a transaction, or ran past the LAP's deadline
CREATE TABLE terminations (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    table_id text NOT NULL,
    pid integer NOT NULL,
    action text NOT NULL CHECK (action IN ('ended', 'cancelled')),
    why text NOT NULL,
    query text,
    signalled boolean NOT NULL
);

-- the last hit order each table's sign was told of, per level (announced once, across restarts)
CREATE TABLE announced (
    table_id text NOT NULL,
    level text NOT NULL,
    order_no bigint NOT NULL,
    PRIMARY KEY (table_id, level)
);

CREATE FUNCTION my_table() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ SELECT table_id FROM members WHERE role = session_user $$;

-- a whole number from a JSON value: a JSON number without a fraction (at most 18 digits), else NULL.
-- No SET clause, so that it is inlined into the rules that call it (they run with their own
-- search_path; it names built-ins only, which pg_catalog, searched first, resolves)
CREATE FUNCTION jint(j jsonb, k text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(j -> k) = 'number' AND (j ->> k) ~ '^-?[0-9]{1,18}$'
        THEN (j ->> k)::bigint END
$$;

CREATE FUNCTION refuse(ev events, why text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO refusals (table_id, seq, kind, level, reason, data)
        VALUES (ev.table_id, ev.seq, ev.kind, ev.level, why, ev.data) ON CONFLICT DO NOTHING;
    UPDATE members SET closed = coalesce(closed, format('the LAP refused record %s (%s): %s', ev.seq, ev.kind, why))
        WHERE table_id = ev.table_id;
    PERFORM pg_notify('@S', jsonb_build_object('t', 'refused', 'table', ev.table_id)::text);
END $$;

-- an uplink found a ledger record whose MAC or place in the chain it cannot verify (it sends
-- nothing from there on): recorded, and the table's linked wager closed
CREATE FUNCTION report_unverified(s bigint, problem text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table();
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'report_unverified: % is not a member table', session_user USING ERRCODE = '42501';
    END IF;
    INSERT INTO refusals (table_id, seq, kind, reason) VALUES (t, s, 'ledger', left(problem, 300))
        ON CONFLICT DO NOTHING;
    UPDATE members SET closed = coalesce(closed, format('the uplink cannot verify ledger record %s: %s', s,
        left(problem, 200))) WHERE table_id = t;
    PERFORM pg_notify('@S', jsonb_build_object('t', 'refused', 'table', t)::text);
END $$;

-- a table's uplink records a recovery it found (the LAP behind its ledger, the LAP's database
-- another one, caught up again): shown on the floor view; it carries no authority over money
CREATE FUNCTION report_recovery(k text, detail text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table();
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'report_recovery: % is not a member table', session_user USING ERRCODE = '42501';
    END IF;
    IF k NOT IN ('lap-behind', 'identity-changed', 'caught-up') THEN
        RAISE EXCEPTION 'report_recovery: % is not a recovery a table reports', left(k, 40) USING ERRCODE = '22023';
    END IF;
    INSERT INTO recoveries (table_id, kind, detail) VALUES (t, k, left(detail, 500));
    PERFORM pg_notify('@S', jsonb_build_object('t', 'recovery', 'table', t)::text);
END $$;

CREATE FUNCTION set_inoperable(why text) RETURNS void LANGUAGE sql
SET search_path = @S, pg_temp AS $$
    UPDATE link SET state = 'inoperable', reason = left(why, 1000) WHERE state <> 'inoperable'
$$;

CREATE FUNCTION apply_contribution(ev events, lv levels) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    wager bigint := jint(ev.data, 'wager');
    v_round bigint := jint(ev.data, 'round');
    v_seat bigint := jint(ev.data, 'seat');
    ver bigint := coalesce(jint(ev.data, 'rate_version'), lv.rate_version);  -- none: a record of before versions
    rt rates%ROWTYPE;
    m numeric; r numeric; o numeric; room numeric; why text;
BEGIN
    IF wager IS NULL OR wager <= 0 THEN
        RETURN format('the wager %s is not a positive whole number of cents', coalesce(ev.data->>'wager', '(none)'));
    END IF;
    IF wager > lv.max_wager_cents THEN
        RETURN format('a wager of %s cents is above the level''s maximum wager of %s', wager, lv.max_wager_cents);
    END IF;
    IF v_round IS NULL OR v_round < 1 OR v_seat IS NULL OR v_seat < 1 THEN
        RETURN 'the contribution names no round and seat';
    END IF;
    IF ev.data ? 'rate_version' AND jint(ev.data, 'rate_version') IS NULL THEN
        RETURN 'the rate version is not a whole number';
    END IF;
    SELECT * INTO rt FROM rates WHERE level = lv.level AND version = ver;
    IF NOT FOUND THEN
        RETURN format('level %s has no rate version %s', lv.level, ver);
    END IF;
    why := coalesce(CASE WHEN ev.data ? 'rate_version' THEN rate_refusal(ev, lv, ver, v_round) END,
        contribution_order_refusal(ev, lv.level, v_round, v_seat));
    IF why IS NOT NULL THEN
        RETURN why;
    END IF;
    -- the den only grows, by multiples, so every version's rate is exact in it
    m := wager::numeric * rt.rate_num * (lv.den / rt.rate_den);
    r := wager::numeric * rt.reserve_num * (lv.den / rt.reserve_den);
    o := 0;
    IF lv.limit_cents IS NOT NULL THEN
        room := greatest(lv.limit_cents::numeric * lv.den - lv.value_num, 0);
        IF m > room THEN
            IF lv.at_limit = 'reserve' THEN r := r + (m - room); ELSE o := m - room; END IF;
            m := room;
        END IF;
    END IF;
    UPDATE levels SET value_num = value_num + m, reserve_acc = reserve_acc + r, overflow_acc = overflow_acc + o,
        inflow_num = inflow_num + m + r + o, version = version + 1, changed_at = clock_timestamp()
        WHERE level = lv.level;
    INSERT INTO contributions (table_id, seq, level, round_no, seat, wager_cents, rate_version, rate_num, rate_den,
            reserve_num, reserve_den, den, to_meter, to_reserve, to_overflow)
        VALUES (ev.table_id, ev.seq, lv.level, v_round, v_seat, wager, ver, rt.rate_num, rt.rate_den,
            rt.reserve_num, rt.reserve_den, lv.den, m, r, o);
    RETURN NULL;
END $$;

-- the contribution voided: by its seq, or by the round and seat it was made for
CREATE FUNCTION apply_void(ev events, lv levels) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c contributions%ROWTYPE;
    k numeric; short numeric;
    of_seq bigint := jint(ev.data, 'of_seq');
    v_round bigint := jint(ev.data, 'round');
    v_seat bigint := jint(ev.data, 'seat');
BEGIN
    SELECT x.* INTO c FROM contributions x WHERE x.table_id = ev.table_id AND x.level = lv.level
        AND CASE WHEN ev.data ? 'of_seq' THEN x.seq = of_seq ELSE x.round_no = v_round AND x.seat = v_seat END
        AND NOT EXISTS (SELECT 1 FROM voids v WHERE v.table_id = ev.table_id AND v.of_seq = x.seq)
        ORDER BY x.seq LIMIT 1;
    IF NOT FOUND THEN
        RETURN format('no unvoided contribution %s of this table', ev.data);
    END IF;
    IF void_order_refusal(ev, c) IS NOT NULL THEN
        RETURN void_order_refusal(ev, c);
    END IF;
    k := lv.den / c.den;  -- den only grows, by multiples: exact
    short := greatest(c.to_reserve * k - lv.reserve_acc, 0);  -- reserve already moved in by a reset
    UPDATE levels SET value_num = value_num - c.to_meter * k - short,
        reserve_acc = reserve_acc - c.to_reserve * k + short,
        overflow_acc = overflow_acc - c.to_overflow * k,
        inflow_num = inflow_num - (c.to_meter + c.to_reserve + c.to_overflow) * k,
        version = version + 1, changed_at = clock_timestamp() WHERE level = lv.level;
    INSERT INTO voids VALUES (ev.table_id, ev.seq, c.seq, lv.level, c.den, c.to_meter + c.to_reserve + c.to_overflow);
    RETURN NULL;
END $$;

-- why a hit claim is not one a genuine table could make, or NULL
CREATE FUNCTION hit_refusal(ev events, lv levels, fnum bigint, fden bigint, v_round bigint, v_seat bigint)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    IF amount_refusal(ev, fnum, fden, v_round, v_seat) IS NOT NULL THEN
        RETURN amount_refusal(ev, fnum, fden, v_round, v_seat);
    END IF;
    IF fnum IS NULL OR fden IS NULL OR fnum <= 0 OR fden <= 0 OR fnum > fden THEN
        RETURN 'the meter fraction is not in (0, 1]';
    END IF;
    IF NOT (fnum || '/' || fden) = ANY (lv.meter_pays) THEN
        RETURN format('%s/%s of the meter is not a pay of level %s (pays: %s)', fnum, fden, lv.level,
            array_to_string(lv.meter_pays, ', '));
    END IF;
    IF v_round IS NULL OR v_seat IS NULL THEN
        RETURN 'the claim names no round and seat';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM contributions c WHERE c.table_id = ev.table_id AND c.level = lv.level
            AND c.round_no = v_round AND c.seat = v_seat AND c.seq < ev.seq
            AND NOT EXISTS (SELECT 1 FROM voids v WHERE v.table_id = c.table_id AND v.of_seq = c.seq)) THEN
        RETURN format('this table made no progressive wager in round %s at seat %s', v_round, v_seat);
    END IF;
    IF EXISTS (SELECT 1 FROM hits h WHERE h.table_id = ev.table_id AND h.level = lv.level
            AND h.round_no = v_round AND h.seat = v_seat) THEN
        RETURN format('round %s seat %s was claimed already', v_round, v_seat);
    END IF;
    RETURN NULL;
END $$;

-- a hit the table's ledger shows paid, which this LAP does not hold (restored from a backup, failed
-- over to a standby that lagged): re-established at the amount paid (the table's ledger is the
-- record of what was paid; the LAP never re-prices it), recorded.  hit_refusal has checked the
-- LAP's own proof that it decided this amount for this claim (amount_refusal) before this runs.
-- The tables resend in their own order, not the order the lost hits were decided in: another
-- table's later hit, restored first, may have taken the meter below this one's amount, and no
-- resend brings it back (issue 22: held for that, a table stayed closed for good).  So a full hit
-- (the meter reset after it) is taken while the reset meter covers what the meter lacks (recorded
-- as short); only a hit that would leave the meter negative is held (the uplink retries while the
-- other tables resend)
CREATE FUNCTION restored_amount(ev events, lv levels, is_full boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    paid bigint := jint(ev.data, 'paid_cents');
    held bigint := div(lv.value_num, lv.den);
    after numeric;
BEGIN
    IF paid IS NULL OR paid < 0 THEN
        RETURN NULL;
    END IF;
    -- the meter after the hit, as apply_hit computes it
    after := lv.value_num - paid::numeric * lv.den
        + CASE WHEN is_full THEN lv.reset_cents::numeric * lv.den + lv.reserve_acc ELSE 0 END;
    IF after < 0 THEN
        RAISE EXCEPTION 'event %/%: the meter of level % holds % cents, less than the % the table paid: %',
            ev.table_id, ev.seq, lv.level, held, paid,
            'held until the other tables have resent what this LAP lost' USING ERRCODE = '55000';
    END IF;
    INSERT INTO recoveries (table_id, kind, detail, seq, level, cents) VALUES (ev.table_id, 'hit-restored',
        format('hit %s re-established at the %s cents the table paid (the meter held %s%s)', ev.seq, paid, held,
            CASE WHEN paid > held THEN format('; %s short, taken from the reset meter: hits decided after it'
                ' were restored first', paid - held) ELSE '' END), ev.seq, lv.level, paid);
    RETURN paid;
END $$;

CREATE FUNCTION apply_hit(ev events, lv levels) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    fnum bigint := jint(ev.data, 'fraction_num');
    fden bigint := jint(ev.data, 'fraction_den');
    v_round bigint := jint(ev.data, 'round');
    v_seat bigint := jint(ev.data, 'seat');
    g bigint; why text; cents bigint; amount bigint; ord bigint; moved numeric; is_full boolean;
BEGIN
    IF fnum > 0 AND fden > 0 THEN
        g := gcd(fnum, fden);
        fnum := fnum / g;
        fden := fden / g;
    END IF;
    why := hit_refusal(ev, lv, fnum, fden, v_round, v_seat);
    IF why IS NOT NULL THEN
        RETURN why;
    END IF;
    is_full := fnum = fden;
    cents := div(lv.value_num, lv.den);
    amount := coalesce(restored_amount(ev, lv, is_full), div(fnum::numeric * cents, fden));
    ord := lv.hits + 1;
    moved := CASE WHEN is_full THEN lv.reserve_acc ELSE 0 END;
    UPDATE levels SET value_num = value_num - amount::numeric * den
            + CASE WHEN is_full THEN reset_cents::numeric * den + reserve_acc ELSE 0 END,
        reserve_acc = reserve_acc - moved,
        inflow_num = inflow_num + CASE WHEN is_full THEN reset_cents::numeric * den ELSE 0 END,
        paid_cents = paid_cents + amount, hits = ord, version = version + 1, changed_at = clock_timestamp()
        WHERE level = lv.level;
    INSERT INTO hits VALUES (lv.level, ord, ev.table_id, ev.seq, v_round, v_seat, coalesce(ev.data->>'hand', ''),
        fnum, fden, cents, amount, ev.table_time, DEFAULT,
        hit_proof(ev.table_id, ev.seq, lv.level, v_round, v_seat, fnum, fden, amount));
    IF is_full THEN
        INSERT INTO reseeds VALUES (lv.level, ord, lv.reset_cents, lv.den, moved);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION apply_paid(ev events, lv levels) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    hs bigint := jint(ev.data, 'hit_seq');
    c bigint := jint(ev.data, 'cents');
    amount bigint;
BEGIN
    SELECT amount_cents INTO amount FROM hits WHERE table_id = ev.table_id AND seq = hs AND level = lv.level;
    IF NOT FOUND OR c IS NULL OR amount <> c THEN
        RETURN format('no hit %s of this table answered %s cents', ev.data->>'hit_seq', ev.data->>'cents');
    END IF;
    IF hs >= ev.seq THEN
        RETURN format('a payment (record %s) before the claim it pays (record %s)', ev.seq, hs);
    END IF;
    IF EXISTS (SELECT 1 FROM payouts WHERE table_id = ev.table_id AND hit_seq = hs) THEN
        RETURN format('hit %s was paid already', hs);
    END IF;
    INSERT INTO payouts VALUES (ev.table_id, ev.seq, hs, amount);
    RETURN NULL;
END $$;

-- the wagered cents a batch's totals count for one event (as the table's ledger seam counts them)
CREATE FUNCTION event_wager(ev events) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN ev.kind = 'contribution' AND pg_catalog.jsonb_typeof(ev.data -> 'wager') = 'number'
        THEN (ev.data ->> 'wager')::numeric ELSE 0 END
$$;

-- the per-kind rules below carry no SET clause of their own (each would cost a save and restore of
-- the setting per event): only apply_event calls them, and its search_path is theirs
CREATE FUNCTION apply_event() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE lv levels%ROWTYPE; why text;
BEGIN
    PERFORM transaction_deadline(NEW);
    IF (SELECT state FROM link) = 'inoperable' THEN
        -- held in the table's outbox (the uplink retries) until the LAP is operable again
        RAISE EXCEPTION 'event %/%: the LAP is inoperable (%)', NEW.table_id, NEW.seq, (SELECT reason FROM link)
            USING ERRCODE = '55000';
    END IF;
    SELECT * INTO lv FROM levels WHERE level = NEW.level FOR UPDATE;
    IF NOT FOUND THEN
        why := format('no level %s', NEW.level);
    ELSIF NEW.kind = 'contribution' THEN
        why := apply_contribution(NEW, lv);
    ELSIF NEW.kind = 'void' THEN
        why := apply_void(NEW, lv);
    ELSIF NEW.kind = 'hit' THEN
        why := apply_hit(NEW, lv);
    ELSE
        why := apply_paid(NEW, lv);
    END IF;
    IF why IS NULL AND NEW.kind IN ('hit', 'paid') THEN
        -- a doorbell: the uplinks read the values from the rows (a notification carries no authority).
        -- A hit rings at once (every sign shows it); contributions and voids do not: the LAP rings
        -- the meters' doorbell at a bounded rate (controller/lap/lap.py ``push_meters``), so that a
        -- contribution costs the database no read by every table (issue 22)
        PERFORM pg_notify('@S', jsonb_build_object('t', 'meter', 'level', NEW.level)::text);
    ELSIF why IS NOT NULL THEN
        PERFORM refuse(NEW, why);
    END IF;
    -- what the LAP holds of the table, running (the batch check reads it: constant time)
    INSERT INTO held AS h (table_id, events, wagers, max_seq) VALUES (NEW.table_id, 1, event_wager(NEW), NEW.seq)
        ON CONFLICT (table_id) DO UPDATE SET events = h.events + 1, wagers = h.wagers + excluded.wagers,
            max_seq = greatest(h.max_seq, excluded.max_seq);
    RETURN NULL;
END $$;

CREATE TRIGGER apply_event AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION apply_event();

-- every level's running identity (O(levels)): a meter changed behind the rules stops the link
CREATE FUNCTION check_identity() RETURNS text LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE p text;
BEGIN
    SELECT string_agg(format('level %s: meter, reserve, overflow and paid hold %s/%s cents, the records %s/%s',
            level, value_num + reserve_acc + overflow_acc + paid_cents::numeric * den, den, inflow_num, den), '; ')
        INTO p FROM levels WHERE value_num + reserve_acc + overflow_acc + paid_cents::numeric * den <> inflow_num;
    IF p IS NOT NULL THEN
        PERFORM set_inoperable('the meters disagree with the contributions: ' || p);
    END IF;
    RETURN p;
END $$;

-- a batch moves the table's recorded head forward only, to an event the LAP holds
CREATE FUNCTION batch_refusal(b batches, reconciled bigint) RETURNS text LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE head_seq text := substring(b.chain_head FROM '^([0-9]{1,18}):.');
BEGIN
    IF b.last_seq <= reconciled THEN
        RETURN format('its last seq %s is not beyond the %s already reconciled', b.last_seq, reconciled);
    END IF;
    IF head_seq IS NULL OR head_seq::bigint <> b.last_seq THEN
        RETURN format('its chain head %s does not name seq %s', left(b.chain_head, 40), b.last_seq);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM events WHERE table_id = b.table_id AND seq = b.last_seq) THEN
        RETURN format('the LAP holds no event %s of this table', b.last_seq);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION check_batch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE n bigint; w numeric; mx bigint; rs bigint; why text;
BEGIN
    SELECT reconciled_seq INTO rs FROM members WHERE table_id = NEW.table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'batch: % is not a member table', NEW.table_id USING ERRCODE = '42501';
    END IF;
    why := batch_refusal(NEW, rs);
    IF why IS NOT NULL THEN
        NEW.verified := false;
        NEW.problem := 'refused: ' || why;  -- recorded; the head does not move
        RETURN NEW;
    END IF;
    -- the running totals (``held``), not a count of the table's history: constant time with the
    -- member's row locked.  Events beyond the batch's last seq (none from a genuine uplink, which
    -- sends in seq order) are taken off by a range read of those alone
    SELECT h.events, h.wagers, h.max_seq INTO n, w, mx FROM held h WHERE h.table_id = NEW.table_id;
    n := coalesce(n, 0);
    w := coalesce(w, 0);
    IF mx > NEW.last_seq THEN
        SELECT n - count(*), w - coalesce(sum(event_wager(e)), 0) INTO n, w
            FROM events e WHERE e.table_id = NEW.table_id AND e.seq > NEW.last_seq;
    END IF;
    IF n = NEW.events_total AND w = NEW.wagers_total THEN
        NEW.verified := true;
        UPDATE members SET reconciled_seq = NEW.last_seq, chain_head = NEW.chain_head, mismatch = NULL,
            last_seen = clock_timestamp() WHERE table_id = NEW.table_id;
        -- no doorbell: only the sending table cares, and its uplink reads after its own batch
    ELSE
        NEW.problem := format('table says %s events, %s cents wagered up to seq %s; the LAP holds %s, %s',
            NEW.events_total, NEW.wagers_total, NEW.last_seq, n, w);
        UPDATE members SET mismatch = NEW.problem WHERE table_id = NEW.table_id;
        PERFORM pg_notify('@S', jsonb_build_object('t', 'mismatch', 'table', NEW.table_id)::text);
    END IF;
    PERFORM check_identity();
    RETURN NEW;
END $$;

CREATE TRIGGER check_batch BEFORE INSERT ON batches FOR EACH ROW EXECUTE FUNCTION check_batch();

CREATE FUNCTION table_seen() RETURNS void LANGUAGE sql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$ UPDATE members SET last_seen = clock_timestamp() WHERE role = session_user $$;

-- the LAP's own heartbeat: a row no table can write (the tables' uplinks read it; the
-- notification is only a doorbell)
CREATE FUNCTION heartbeat() RETURNS void LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    UPDATE link SET heartbeat_at = clock_timestamp(), lap_pid = pg_backend_pid();
    PERFORM pg_notify('@S', '{"t": "hb"}');
END $$;

-- the hits this table's sign has not been told of, each once (remembered across restarts:
-- ``announced``); the hits before a table first asks are no news to it
CREATE FUNCTION take_announcements() RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER
SET search_path = @S, pg_temp AS $$
DECLARE t text := my_table(); out jsonb := '[]'; r record;
BEGIN
    IF t IS NULL THEN
        RETURN out;
    END IF;
    FOR r IN SELECT v.level, v.hits, a.order_no AS done FROM levels v
            LEFT JOIN announced a ON a.table_id = t AND a.level = v.level ORDER BY v.level LOOP
        IF r.done IS NULL THEN
            INSERT INTO announced VALUES (t, r.level, r.hits) ON CONFLICT DO NOTHING;
        ELSIF r.hits > r.done THEN
            UPDATE announced SET order_no = r.hits WHERE table_id = t AND level = r.level AND order_no = r.done;
            IF FOUND THEN
                out := out || coalesce((SELECT jsonb_agg(jsonb_build_object('level', h.level, 'order', h.order_no,
                        'table', h.table_id, 'asset', m.asset, 'amount', h.amount_cents) ORDER BY h.order_no)
                    FROM hits h JOIN members m ON m.table_id = h.table_id
                    WHERE h.level = r.level AND h.order_no > r.done AND h.order_no <= r.hits), '[]');
            END IF;
        END IF;
    END LOOP;
    RETURN out;
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
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON refusals FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON rates FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON recoveries FOR EACH ROW EXECUTE FUNCTION append_only();

-- parameters: only with the link stopped, every change recorded
CREATE FUNCTION guard_params() RETURNS trigger LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE o jsonb; n jsonb; k text; acc text[];
BEGIN
    -- the accounts (moved by events) are not parameters
    IF TG_TABLE_NAME = 'levels' THEN
        acc := '{value_num,reserve_acc,overflow_acc,inflow_num,paid_cents,hits,version,den,rate_version,changed_at}';
    ELSE
        acc := '{reconciled_seq,chain_head,mismatch,closed,last_seen}';
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

-- a level's rates, versioned: version 1 at its creation, one more whenever they change (after
-- guard_params, which lets them change only with the link stopped); every version is kept
CREATE FUNCTION version_rates() RETURNS trigger LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.rate_version := 1;
    ELSIF (NEW.rate_num, NEW.rate_den, NEW.reserve_num, NEW.reserve_den)
            IS NOT DISTINCT FROM (OLD.rate_num, OLD.rate_den, OLD.reserve_num, OLD.reserve_den) THEN
        NEW.rate_version := OLD.rate_version;
        RETURN NEW;
    ELSE
        NEW.rate_version := OLD.rate_version + 1;
    END IF;
    INSERT INTO rates (level, version, rate_num, rate_den, reserve_num, reserve_den)
        VALUES (NEW.level, NEW.rate_version, NEW.rate_num, NEW.rate_den, NEW.reserve_num, NEW.reserve_den);
    RETURN NEW;
END $$;

CREATE TRIGGER version_rates BEFORE INSERT OR UPDATE ON levels FOR EACH ROW EXECUTE FUNCTION version_rates();

CREATE FUNCTION record_state() RETURNS trigger LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    IF OLD.state IS DISTINCT FROM NEW.state THEN
        INSERT INTO param_changes (what, key, old, new)
            VALUES ('link', 'state', to_jsonb(OLD.state), to_jsonb(NEW.state));
        PERFORM pg_notify('@S', jsonb_build_object('t', 'state')::text);
    END IF;
    IF OLD.reason IS DISTINCT FROM NEW.reason THEN
        INSERT INTO param_changes (what, key, old, new)
            VALUES ('link', 'reason', to_jsonb(OLD.reason), to_jsonb(NEW.reason));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER record_state BEFORE UPDATE ON link FOR EACH ROW EXECUTE FUNCTION record_state();

-- the LAP's operator reopens a table a refusal closed (tablectl lap --reopen), recorded
CREATE FUNCTION reopen_table(t text, note text) RETURNS text LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE was text;
BEGIN
    SELECT closed INTO was FROM members WHERE table_id = t FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no member table %', t USING ERRCODE = '22023';
    END IF;
    IF was IS NOT NULL THEN
        UPDATE members SET closed = NULL WHERE table_id = t;
        INSERT INTO param_changes (what, key, old, new)
            VALUES ('members', t, jsonb_build_object('closed', was), jsonb_build_object('closed', NULL, 'note', note));
        PERFORM pg_notify('@S', jsonb_build_object('t', 'reopened', 'table', t)::text);
    END IF;
    RETURN was;
END $$;

-- the floor view's role (controller/lap/schema.py floor_role): a row-level policy lets it read
CREATE FUNCTION floor_reader() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT session_user = ('@S' || '__floor')::name
$$;

-- the key of the LAP's proofs, made once at install (64 random bytes, xor the HMAC pads)
CREATE FUNCTION new_lap_key() RETURNS void LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
DECLARE k bytea := ''::bytea; ki bytea; ko bytea;
BEGIN
    FOR i IN 1..4 LOOP
        k := k || decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
    END LOOP;
    ki := k;
    ko := k;
    FOR i IN 0..63 LOOP
        ki := set_byte(ki, i, get_byte(k, i) # 54);
        ko := set_byte(ko, i, get_byte(k, i) # 92);
    END LOOP;
    INSERT INTO lap_key VALUES (true, ki, ko);
END $$;

SELECT new_lap_key();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON lap_key FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON terminations FOR EACH ROW EXECUTE FUNCTION append_only();

-- the LAP's proof that it decided ``cents`` for this claim (HMAC-SHA256, hex)
CREATE FUNCTION hit_proof(t text, s bigint, lvl text, rnd bigint, seat bigint, fnum bigint, fden bigint,
    cents bigint) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.encode(pg_catalog.sha256(k.ko || pg_catalog.sha256(k.ki || pg_catalog.convert_to(
        pg_catalog.concat_ws('|', 'hit', t, s, lvl, rnd, seat, fnum, fden, cents), 'UTF8'))), 'hex')
    FROM @S.lap_key k
$$;

-- why a hit claim's amount is not the LAP's to pay, or NULL: a claim names no amount, but a paid
-- hit resent to a LAP that lost it, with the LAP's own proof of the amount it decided
CREATE FUNCTION amount_refusal(ev events, fnum bigint, fden bigint, v_round bigint, v_seat bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE paid bigint := jint(ev.data, 'paid_cents');
BEGIN
    IF ev.data ?| ARRAY['cents', 'amount', 'amount_cents'] THEN
        RETURN 'the claim names an amount: the LAP decides every amount (a fixed pay is the table''s own)';
    END IF;
    IF NOT ev.data ?| ARRAY['paid_cents', 'paid_proof'] THEN
        RETURN NULL;
    END IF;
    IF paid IS NULL OR paid < 0 OR pg_catalog.jsonb_typeof(ev.data -> 'paid_proof') IS DISTINCT FROM 'string'
            OR (ev.data ->> 'paid_proof') IS DISTINCT FROM
                hit_proof(ev.table_id, ev.seq, ev.level, v_round, v_seat, fnum, fden, paid) THEN
        RETURN format('the claim names an amount (%s cents paid) without the LAP''s proof that it decided it for '
            'this claim: the LAP decides every amount', left(coalesce(ev.data ->> 'paid_cents', '(none)'), 40));
    END IF;
    RETURN NULL;
END $$;

-- a void is of a contribution made before it, and never once its round and seat were claimed (a
-- genuine table voids a round before its results: the refund kept with the jackpot otherwise)
CREATE FUNCTION void_order_refusal(ev events, c contributions) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    IF c.seq >= ev.seq THEN
        RETURN format('a void (record %s) before the contribution it voids (record %s)', ev.seq, c.seq);
    END IF;
    IF EXISTS (SELECT 1 FROM hits h WHERE h.table_id = ev.table_id AND h.level = c.level
            AND h.round_no = c.round_no AND h.seat = c.seat) THEN
        RETURN format('round %s seat %s was claimed (a hit): its wager is not voided after', c.round_no, c.seat);
    END IF;
    RETURN NULL;
END $$;

-- a contribution is made before any claim for its round and seat
CREATE FUNCTION contribution_order_refusal(ev events, lvl text, v_round bigint, v_seat bigint)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM hits h WHERE h.table_id = ev.table_id AND h.level = lvl
            AND h.round_no = v_round AND h.seat = v_seat) THEN
        RETURN format('round %s seat %s was claimed already: no contribution after its claim', v_round, v_seat);
    END IF;
    RETURN NULL;
END $$;

-- when the record says its wager was taken: its lock-out (the uplink adds it from the table's
-- ledger), else the record's own time, else when the LAP received it
CREATE FUNCTION taken_at(ev events) RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT coalesce(CASE WHEN jint(ev.data, 'taken_ms') BETWEEN 0 AND 100000000000000
        THEN pg_catalog.to_timestamp(jint(ev.data, 'taken_ms') / 1000.0) END, ev.table_time, ev.received_at)
$$;

-- a rate version the level no longer has (replaced, with the link stopped) only if it was in force
-- when the wager was taken: before the next version was made (give or take RATE_SKEW_S), and not
-- after this table took an earlier round's wager under a later version (a table learns versions
-- in order).  The current version is the table's to name whatever its clock says (a table's clock
-- orders nothing: one an hour slow says every wager was taken before the version was made)
CREATE FUNCTION rate_refusal(ev events, lv levels, ver bigint, v_round bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE until timestamptz; taken timestamptz := taken_at(ev); later contributions%ROWTYPE;
BEGIN
    IF ver >= lv.rate_version THEN
        RETURN NULL;
    END IF;
    SELECT r.at INTO until FROM rates r WHERE r.level = lv.level AND r.version = ver + 1;
    IF taken >= until + interval '5 seconds' THEN
        RETURN format('rate version %s of level %s was in force until %s; the record says its wager was taken at %s',
            ver, lv.level, until, taken);
    END IF;
    -- the table's last round before this one (its versions only grow: that round's is the latest)
    SELECT * INTO later FROM contributions c WHERE c.table_id = ev.table_id AND c.level = lv.level
        AND c.round_no < v_round ORDER BY c.round_no DESC LIMIT 1;
    IF FOUND AND later.rate_version > ver THEN
        RETURN format('rate version %s of level %s: this table took round %s''s wager under version %s already',
            ver, lv.level, later.round_no, later.rate_version);
    END IF;
    RETURN NULL;
END $$;

-- the rules' own deadline, which no session setting lowers: an event applied in a transaction
-- that has run this long rolls the transaction back (and the level's lock it holds) with an
-- error (57014: the uplink sends the batch again, smaller)
CREATE FUNCTION transaction_deadline(ev events) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF clock_timestamp() - transaction_timestamp() > interval '5 seconds' THEN
        RAISE EXCEPTION 'event %/%: its transaction has run % s, past the LAP''s 5 s: rolled back',
            ev.table_id, ev.seq, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())::numeric, 1)
            USING ERRCODE = '57014';
    END IF;
END $$;

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

-- issue 25: each change of a table's tilts or linked wager, for the floor view's tilt and event log
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

-- issue 25: a pending hit acknowledged on the floor view, under the person's name (append-only;
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
-- (issue 25: one table's 5 MB tilts must not make every floor picture 5 MB): 16 tilts, their
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

REVOKE ALL ON ALL TABLES IN SCHEMA @S FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA @S FROM PUBLIC;
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE batches ENABLE ROW LEVEL SECURITY;
ALTER TABLE members ENABLE ROW LEVEL SECURITY;
ALTER TABLE contributions ENABLE ROW LEVEL SECURITY;
ALTER TABLE voids ENABLE ROW LEVEL SECURITY;
ALTER TABLE hits ENABLE ROW LEVEL SECURITY;
ALTER TABLE payouts ENABLE ROW LEVEL SECURITY;
ALTER TABLE refusals ENABLE ROW LEVEL SECURITY;
ALTER TABLE held ENABLE ROW LEVEL SECURITY;
ALTER TABLE recoveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON events USING (table_id = my_table()) WITH CHECK (table_id = my_table());
CREATE POLICY own ON batches USING (table_id = my_table()) WITH CHECK (table_id = my_table());
CREATE POLICY own ON members USING (table_id = my_table());
CREATE POLICY own ON contributions USING (table_id = my_table());
CREATE POLICY own ON voids USING (table_id = my_table());
CREATE POLICY own ON payouts USING (table_id = my_table());
CREATE POLICY own ON refusals USING (table_id = my_table());
CREATE POLICY own ON held USING (table_id = my_table());
CREATE POLICY own ON recoveries USING (table_id = my_table());
-- hits are public on the link (the common meter shows the winning table's asset number)
CREATE POLICY all_read ON hits FOR SELECT USING (true);
-- the floor view's role reads every table's rows (it writes none of them: no grant)
CREATE POLICY floor_read ON events FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON batches FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON members FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON contributions FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON voids FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON payouts FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON refusals FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON held FOR SELECT USING ((SELECT floor_reader()));
CREATE POLICY floor_read ON recoveries FOR SELECT USING ((SELECT floor_reader()));

INSERT INTO schema_info VALUES (true, 4);

-- @GRANTS

GRANT USAGE ON SCHEMA @S TO @R;
REVOKE INSERT ON @S.events, @S.batches FROM @R;
GRANT SELECT ON @S.events, @S.batches TO @R;
-- only the columns a table states (never when the LAP received it, nor the LAP's verdict)
GRANT INSERT (table_id, seq, kind, level, data, table_time) ON @S.events TO @R;
GRANT INSERT (table_id, last_seq, events_total, wagers_total, chain_head) ON @S.batches TO @R;
GRANT SELECT ON @S.levels, @S.link, @S.members, @S.contributions, @S.voids, @S.hits, @S.payouts,
    @S.refusals, @S.held, @S.recoveries TO @R;
GRANT EXECUTE ON FUNCTION @S.my_table(), @S.table_seen(), @S.report_status(jsonb), @S.asset_of(text),
    @S.take_announcements(), @S.report_unverified(bigint, text), @S.report_recovery(text, text),
    @S.floor_reader() TO @R;
