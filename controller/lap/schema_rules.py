"""The LAP's money rules, in PL/pgSQL (part of the schema, controller/lap/schema.py).

``apply_event`` (an AFTER INSERT trigger on ``events``, SECURITY DEFINER) locks the event's
level (``SELECT … FOR UPDATE``: one decision at a time, so hits are ordered by commit) and
applies the event through one function per kind, each returning NULL (applied) or why a genuine
table could not have produced it; a refusal is recorded (``refuse``), never applied, and closes
that table's linked wager.  Amounts come from the level's accounts as the database holds them
when the event is decided (cf. N.J.A.C. 13:69E-1.39B, 9 NYCRR 5321.18: the controller, never a
table, calculates the amount and records the order of hits).

Every value read from an event's JSON goes through ``jint`` (a JSON number with no fraction, or
NULL): a string, a fraction, ``1e400`` or a missing key is refused, never cast into an error.
"""

from __future__ import annotations

RULES_DDL = r"""
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
-- resend brings it back (held for that, a table stayed closed for good).  So a full hit
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
    IF foreign_hit(ev.table_id, hs) THEN
        RETURN format('hit %s is one this table''s ledger does not hold: not counted as paid', hs);
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
        -- contribution costs the database no read by every table
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

-- the LAP's own heartbeat: a row no table can write (the tables' uplinks read it on their slow
-- timer).  It rings no doorbell: a notification costs every listening backend a wake-up (about
-- 60 us of CPU each, five times a second at a 200 ms heartbeat: more than the uplink's own read)
-- for a row the uplinks read on their timer anyway
CREATE FUNCTION heartbeat() RETURNS void LANGUAGE plpgsql
SET search_path = @S, pg_temp AS $$
BEGIN
    UPDATE link SET heartbeat_at = clock_timestamp(), lap_pid = pg_backend_pid();
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
"""
