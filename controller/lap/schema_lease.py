"""Which LAP process is the active one, in PL/pgSQL (part of the schema, controller/lap/schema.py;
used by controller/lap/lease.py).

``tablectl lap`` may run on two hosts; exactly one is **active**.  Leadership is a lease in the
database, one row (``lap_lease``) with a **fencing epoch**:

- ``lease_acquire(holder, ttl, pid)``: a new epoch for ``holder`` when the lease has lapsed
  (``expires_at`` past, by the database's clock: the hosts' clocks never decide) or is already
  ``holder``'s (the same host's LAP restarted: its older process is fenced by the new epoch);
  NULL while another holder's lease runs.  Each grant recorded in ``lap_lease_log``.
- ``lease_renew(epoch)``: the heartbeat's; extends the lease of that epoch only.
- ``lease_hold(epoch)``: every write of the LAP begins its transaction with it.  It locks the
  lease's row ``FOR SHARE`` until the transaction ends, so a grant (which takes the row ``FOR
  UPDATE``) waits for it; a write of an older epoch is refused (SQLSTATE ``TL001``), so a LAP
  that lost the lease — paused, cut off, its host thought dead — cannot write when it wakes,
  and steps down to standby.

A lease whose holder is gone but that nobody took over may still be renewed by that holder (no
one else can have written meanwhile: a grant bumps the epoch).
"""

from __future__ import annotations

#: the SQLSTATE of a write or renewal by a LAP whose epoch is no longer the lease's
LEASE_LOST = "TL001"

LEASE_DDL = r"""
CREATE TABLE lap_lease (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    epoch bigint NOT NULL CHECK (epoch >= 0),
    holder text NOT NULL CHECK (octet_length(holder) BETWEEN 1 AND 120),
    pid integer,
    ttl_s double precision NOT NULL CHECK (ttl_s >= 0 AND ttl_s <= 600),
    acquired_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
INSERT INTO lap_lease VALUES (true, 0, '(none)', NULL, 0, 'epoch', 'epoch', 'epoch');
CREATE TRIGGER no_delete BEFORE DELETE ON lap_lease FOR EACH ROW EXECUTE FUNCTION append_only();

-- every grant of the lease: who took it, from whom, how long after the previous one lapsed
CREATE TABLE lap_lease_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch bigint NOT NULL,
    holder text NOT NULL,
    pid integer,
    previous text NOT NULL,
    lapsed_s double precision
);
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON lap_lease_log FOR EACH ROW EXECUTE FUNCTION append_only();

CREATE FUNCTION lease_acquire(p_holder text, p_ttl_s double precision, p_pid integer) RETURNS bigint
LANGUAGE plpgsql SET search_path = @S, pg_temp AS $$
DECLARE r lap_lease; t timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO STRICT r FROM lap_lease FOR UPDATE;
    IF r.expires_at > t AND r.holder <> p_holder THEN
        RETURN NULL;
    END IF;
    UPDATE lap_lease SET epoch = r.epoch + 1, holder = p_holder, pid = p_pid, ttl_s = p_ttl_s,
        acquired_at = t, renewed_at = t, expires_at = t + make_interval(secs => p_ttl_s);
    INSERT INTO lap_lease_log (epoch, holder, pid, previous, lapsed_s) VALUES (r.epoch + 1, p_holder, p_pid,
        r.holder, CASE WHEN r.epoch > 0 THEN extract(epoch FROM t - r.expires_at) END);
    PERFORM pg_notify('@S', '{"t": "lease"}');
    RETURN r.epoch + 1;
END $$;

CREATE FUNCTION lease_lost(r lap_lease, p_epoch bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the LAP lease is epoch % held by %: epoch % lost it', r.epoch, r.holder, p_epoch
        USING ERRCODE = 'TL001';
END $$;

CREATE FUNCTION lease_renew(p_epoch bigint) RETURNS double precision
LANGUAGE plpgsql SET search_path = @S, pg_temp AS $$
DECLARE r lap_lease; t timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO STRICT r FROM lap_lease FOR UPDATE;
    IF r.epoch <> p_epoch THEN
        PERFORM lease_lost(r, p_epoch);
    END IF;
    UPDATE lap_lease SET renewed_at = t, expires_at = t + make_interval(secs => r.ttl_s);
    RETURN r.ttl_s;
END $$;

CREATE FUNCTION lease_hold(p_epoch bigint) RETURNS void
LANGUAGE plpgsql SET search_path = @S, pg_temp AS $$
DECLARE r lap_lease;
BEGIN
    SELECT * INTO STRICT r FROM lap_lease FOR SHARE;
    IF r.epoch <> p_epoch THEN
        PERFORM lease_lost(r, p_epoch);
    END IF;
END $$;
"""
