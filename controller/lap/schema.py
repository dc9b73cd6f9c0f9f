"""The LAP controller's PostgreSQL schema (one schema per linked group): its tables, who may do
what, and the whole assembled in one transaction.  The rules that decide money are PL/pgSQL in
controller/lap/schema_rules.py; the floor view's additions in controller/lap/schema_floor.py.

Every rule that decides money lives in the database, so that one serialisable decision orders
and prices every event whichever process sends it:

- ``events`` is the inbox: a table's uplink INSERTs its link events, keyed by
  ``(table_id, seq)`` (the table's own ledger sequence number), so a resend is a no-op
  (``ON CONFLICT DO NOTHING``).  Row-level security lets a table role insert and read only
  rows carrying its own ``table_id``; no role but the LAP's owner may update or delete any row,
  and triggers make every record table append-only even for the owner.
- ``apply_event`` applies each event to its level with the level's row locked, or **refuses**
  it: an event a genuine table could not have produced (a contribution above the level's
  ``max_wager_cents`` or not a positive whole number of cents, a hit claim for a (round, seat)
  with no progressive wager from that table, a second claim for one (round, seat), a fraction
  the level's ``meter_pays`` does not have, an amount named by the claim) is kept in ``events``,
  recorded in ``refusals`` and closes that table's linked wager (``members.closed``) until the
  LAP's operator reopens it (``tablectl lap --reopen``).
- A contribution carries the rate version it was taken under (``rates``: every rate the level
  ever had, appended whenever ``lap.toml`` changes it, with the link stopped); the database
  applies that version's rates, not the rates in force when the record arrives.
- ``batches``: a batch names the table's ledger chain head at its last seq and the table's own
  totals; ``check_batch`` moves the recorded head only forward (a stale or foreign batch is
  refused and recorded), compares the totals, and checks every level's running identity
  (``inflow_num``): a meter changed behind the rules makes the link ``inoperable``.
- ``held``: what the LAP holds of each table (events, wagered cents, last seq), kept running by
  ``apply_event``, so that the batch check is constant-time (it used to count the
  table's whole history with the level's row lock held).
- A hit the table's ledger shows **paid** and the LAP does not hold (a LAP restored from a
  backup, or failed over to a standby that lagged) is re-established by the table's resend at
  the amount paid (``paid_cents``), never re-priced — only with the LAP's own proof that it
  decided that amount for that claim (``hits.proof``, kept by the table with its payment:
  controller/lap/schema_guard.py); recorded in ``recoveries`` with the other recoveries the
  uplinks find (docs/linked.md).
- What one table's role can still do with the database is bounded by the schema too: every
  field it writes (CHECK constraints, in bytes), the columns it may set, a transaction deadline
  inside the rules, the order of a genuine round, a rate version only while in force
  (controller/lap/schema_guard.py); the LAP process ends its sessions past their deadlines
  (controller/lap/guard.py).
- Every change rings ``pg_notify(<schema>, …)``: a doorbell only (any role may NOTIFY any
  channel); the uplinks read the values from the rows (controller/uplink/lapview.py).

Reconciliation identity, for every level, at every commit (``inflow_num`` keeps the right side
running; ``tablectl lap --reconcile`` and the LAP's timer recompute it from the records)::

    value + reserve + overflow + Σ payouts(decided) ==
        seed + Σ resets + Σ contributions(wager × (rate + reserve_rate) of its version) − Σ voided
"""

from __future__ import annotations

import re

from controller.lap.schema_auth import AUTH_GRANTS

#: 2: refusals, rate versions, running identity, forward-only batches, the floor view's tables
#: and functions in the schema itself
#: 3: per-table running totals (``held``) for a constant-time batch check, restored hits and the
#: tables' recovery records, the LAP's replication check
#: 4: the LAP's proof of each hit it decides (``hits.proof``, ``lap_key``), every field a table
#: writes bounded in bytes, the sessions the LAP ended (``terminations``), the floor view's role
#: 5: every event and batch head authenticated with the table's link key (``link_keys``,
#: ``events.auth``, ``batches.auth``), the records the LAP holds that a table's ledger does not
#: (controller/lap/schema_auth.py); a version 4 schema is migrated (controller/lap/migrate.py)
#: 6: a heartbeat rings no doorbell
#: 7: the tables' grants held once by a group role (``<schema>__tables``), each table's role a member
SCHEMA_VERSION = 7

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


def check_name(name: str, what: str = "schema") -> str:
    if not _NAME.match(name):
        raise ValueError(f"{what} name {name!r}: use lower-case letters, digits and _ (max 41, letter first)")
    return name


def ddl(schema: str) -> str:
    """The whole schema, created in one transaction (on an empty schema name)."""
    from controller.lap.schema_auth import AUTH_DDL
    from controller.lap.schema_floor import FLOOR_DDL
    from controller.lap.schema_guard import GUARD_DDL
    from controller.lap.schema_lease import LEASE_DDL
    from controller.lap.schema_rules import RULES_DDL

    s = check_name(schema)
    text = _TABLES + RULES_DDL + GUARD_DDL + AUTH_DDL + FLOOR_DDL + LEASE_DDL + _PRIVILEGES
    return text.replace("@VERSION", str(SCHEMA_VERSION)).replace("@S", s)


_TABLES = r"""
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
-- had paid: recorded by the table's uplink, shown on the floor view
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
"""

_PRIVILEGES = r"""
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

INSERT INTO schema_info VALUES (true, @VERSION);
"""


def tables_role(schema: str) -> str:
    """The group every table's role is a member of, holding the tables' grants once:
    ``<schema>__tables`` (no table's role has ``__`` after the schema's name, as with the floor
    view's).  Granted per role, each grant would grow the access list of every table and function
    by one entry: configuring N tables cost N², and a pit of 1,000 did not configure in time."""
    return f"{check_name(schema)}__tables"


def grants(schema: str) -> str:
    """What a table's role may do, granted to :func:`tables_role`: insert and read its own events
    and batches, read the meters and its own records, report itself seen, its status and a ledger
    record it cannot verify, take the hit announcements due to its sign, record a recovery.
    Nothing else (no UPDATE or DELETE anywhere).  Which rows are its own the policies decide by
    ``session_user`` (``my_table()``), so one group serves every table."""
    s, r = check_name(schema), tables_role(schema)
    return f"""
GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT ON {s}.events, {s}.batches TO {r};
-- only the columns a table states (never when the LAP received it, nor the LAP's verdict)
GRANT INSERT (table_id, seq, kind, level, data, table_time, key_no, auth) ON {s}.events TO {r};
GRANT INSERT (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth) ON {s}.batches TO {r};
GRANT SELECT ON {s}.levels, {s}.link, {s}.members, {s}.contributions, {s}.voids, {s}.hits, {s}.payouts,
    {s}.refusals, {s}.held, {s}.recoveries TO {r};
GRANT EXECUTE ON FUNCTION {s}.my_table(), {s}.table_seen(), {s}.report_status(jsonb), {s}.asset_of(text),
    {s}.take_announcements(), {s}.report_unverified(bigint, text), {s}.report_recovery(text, text),
    {s}.floor_reader() TO {r};
""" + AUTH_GRANTS.format(s=s, r=r)


def make_tables_role(schema: str) -> str:
    """The tables' group, made if missing, never a login of its own, with its grants."""
    r = tables_role(schema)
    return f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{r}') THEN CREATE ROLE {r} NOLOGIN; END IF;
END $$;
ALTER ROLE {r} NOLOGIN NOCREATEDB NOCREATEROLE;
""" + grants(schema)


#: a table's uplink holds one connection; a second while the server has not yet noticed the last
#: one dead, and one or two for a technician's look: more is not a table's (a role once held 34
#: of 40, and no other uplink could reconnect)
TABLE_CONNECTIONS = 4
#: the floor view: its pool of readers (4) and its listener, with room for a reconnection
FLOOR_CONNECTIONS = 8


def role_settings(run_s: float) -> dict[str, int]:
    """A link role's session defaults (milliseconds): they end what a client that died left
    behind (a statement, an open transaction, an idle session holding a connection slot).  A
    role may lower them in its own session, so the LAP's deadlines do not depend on them (the
    rules' transaction deadline, controller/lap/guard.py)."""
    ms = max(1000, int(run_s * 1000))
    return {"statement_timeout": ms, "idle_in_transaction_session_timeout": ms, "idle_session_timeout": 60_000}


def role_limits(role: str, run_s: float, connections: int = TABLE_CONNECTIONS) -> str:
    """A link role's connection limit (the role cannot change it: ALTER ROLE needs CREATEROLE)
    and its sessions' defaults (:func:`role_settings`)."""
    r = check_name(role, "role")
    sets = "".join(f"ALTER ROLE {r} SET {k} = {int(v)};\n" for k, v in role_settings(run_s).items())
    return f"ALTER ROLE {r} CONNECTION LIMIT {int(connections)};\n{sets}"


def floor_role(schema: str) -> str:
    """The floor view's role: ``<schema>__floor`` (no table's role: a table id starts with a letter
    or digit, so no table's role has ``__`` after the schema's name)."""
    return f"{check_name(schema)}__floor"


def floor_grants(schema: str) -> str:
    """What the floor view's role may do: read what the page shows, write its own records (the
    logins, the lock-outs, the acknowledgements) — no record of money, not the LAP's key."""
    s, r = check_name(schema), floor_role(schema)
    return f"""
GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT ON {s}.link, {s}.levels, {s}.rates, {s}.members, {s}.events, {s}.contributions, {s}.voids,
    {s}.hits, {s}.reseeds, {s}.payouts, {s}.refusals, {s}.held, {s}.recoveries, {s}.batches,
    {s}.param_changes, {s}.table_status, {s}.table_status_log, {s}.terminations,
    {s}.floor_acks, {s}.floor_logins, {s}.floor_lockouts, {s}.lap_lease, {s}.lap_lease_log TO {r};
GRANT INSERT ON {s}.floor_logins, {s}.floor_acks TO {r};
GRANT INSERT, UPDATE, DELETE ON {s}.floor_lockouts TO {r};
GRANT EXECUTE ON FUNCTION {s}.bounded_tilts(jsonb), {s}.floor_reader(), {s}.my_table() TO {r};
"""
