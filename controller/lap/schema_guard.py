"""What one table's role may not do with the LAP's database, in PL/pgSQL (part of the schema,
controller/lap/schema.py; called by the money rules in controller/lap/schema_rules.py).

- **No amount from a table.**  Every amount is the LAP's: a hit is priced from the meter.  The one
  exception, a LAP that went back in time (restored from a backup, failed over to a standby that
  lagged) taking back a hit the table already paid, names the amount the table paid — and is
  taken only with the LAP's own **proof** that it decided that amount for that very claim
  (``hit_proof``: HMAC-SHA256 under a key made at install, ``lap_key``, which no table role can
  read; the proof is stored with each hit, the table keeps it with its payment).  So a table
  can name back an amount the LAP once decided for it, never another (``amount_refusal``).
- **A genuine round's order**: a claim after its wager, a payment after its claim, a void after
  its contribution and never once its round and seat were claimed (``void_order_refusal``,
  ``contribution_order_refusal``).
- **A replaced rate version only while it was in force** when the record says the wager was
  taken: its lock-out's time (``taken_ms``, added by the uplink from the table's ledger), else
  the record's own time, else when the LAP received it — and not once the table took an earlier
  round under a later version (``rate_refusal``).
- **A deadline the role cannot lower**: an event applied in a transaction that has already run
  :data:`TX_DEADLINE_S` is refused with an error, and the transaction (and the level's lock it
  holds) rolled back (``transaction_deadline``).  A session's ``statement_timeout`` is the
  role's to set; the rules' clock is not.  The LAP process ends the rest
  (controller/lap/guard.py).
- ``floor_reader()``: the floor view's own role (``<schema>__floor``) reads every table's rows.

Nothing here raises on what a table sends, but the deadline (SQLSTATE 57014: the uplink sends
the batch again, smaller).
"""

from __future__ import annotations

#: an event applied in a transaction older than this is refused with an error (the uplink's
#: batches take well under a second; its statements are ended by the server after its link
#: timeout + 1 s)
TX_DEADLINE_S = 5
#: a rate version is in force from its making until the next one's, give or take this (the
#: table's clock against the database's, and a table that hears of the link's stop late)
RATE_SKEW_S = 5

GUARD_DDL = r"""
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
    IF taken >= until + interval '@SKEW seconds' THEN
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
    IF clock_timestamp() - transaction_timestamp() > interval '@TXS seconds' THEN
        RAISE EXCEPTION 'event %/%: its transaction has run % s, past the LAP''s @TXS s: rolled back',
            ev.table_id, ev.seq, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())::numeric, 1)
            USING ERRCODE = '57014';
    END IF;
END $$;
""".replace("@SKEW", str(RATE_SKEW_S)).replace("@TXS", str(TX_DEADLINE_S))
