#!/bin/sh
# Install, upgrade or roll back tablectl FROM A RELEASE BUNDLE, with no network
# (issue 15; docs/install.md).  Run it from the unpacked bundle
# (systemd/build-release.sh makes tablectl-VERSION.tar.gz):
#
#   sudo tablectl-VERSION/systemd/install.sh [--console ttyAMA0] [--start]
#   sudo tablectl-VERSION/systemd/install.sh --rollback       # back to the version before
#   systemd/install.sh --render DIR [--prefix PATH]           # only write the units for PATH into DIR (CI)
#
# Options for tests and image builders:
#   --root DIR     install under DIR instead of / (DIR/opt/tablectl, DIR/etc/tablectl, DIR/var/lib/tablectl);
#                  no user is created, nothing is owned by the service user, no systemd call
#   --prefix PATH  where the versions go (default /opt/tablectl, inside --root)
#   --no-systemd   make no systemctl/udevadm call (a chroot, a container)
#   --python PY    the interpreter for the virtualenv (default python3; must be the one the wheels are for)
#   --lap          the LAP's server: also the floor view's and the sign's web stack (the bundle's lap/:
#                  aiohttp and its dependencies, hash-locked), which `tablectl lap` needs with a [floor]
#
# What it does, in order:
#  1. checks the bundle against its SHA256SUMS;
#  2. a system user `tablectl` (no login) in the `gpio` and `dialout` groups;
#  3. PREFIX/VERSION/venv: a virtualenv with `pip install --no-index --find-links wheelhouse
#     --require-hashes -r requirements.txt` (never the network: --no-index), root-owned,
#     read-only to the service; an existing PREFIX/VERSION is left alone unless --force;
#  4. /etc/tablectl/table.toml from the example unless one exists (edit it!);
#  5. /var/lib/tablectl (the ledger, PINs, lock-out) and /var/lib/tablectl-witness (the witness
#     of the ledger's head, docs/security.md), owned by the service user, mode 0700; the ledger's
#     HMAC key /etc/tablectl/ledger.key (root, 0600; `tablectl key init`) unless one exists —
#     systemd hands it to the service with LoadCredential=;
#  6. every module compiled, then the software digest of the sources and the compiled files
#     recorded as root in /etc/tablectl/software-VERSION.json
#     (`tablectl verify --record --bytecode`), root-owned, where the service cannot write; the active
#     version's is copied to /etc/tablectl/software.json (the configuration's [table]
#     software_record), which the service compares at every start;
#  7. upgrade (another version is current): the service is stopped, the ledger backed up
#     (SQLite online backup, /var/lib/tablectl/backups/), migrated by the new version
#     (`tablectl migrate`, when the version has it), then PREFIX/current switched
#     atomically to the new version (PREFIX/previous keeps the old one) and the service
#     started again if it was running.  --rollback switches back the same way;
#  8. udev rules, the units (after time-sync.target), a journald size cap
#     (/etc/systemd/journald.conf.d/tablectl.conf) and time keeping (fake-hwclock or
#     chrony/systemd-timesyncd: what is there is used; fake-hwclock is installed only
#     when apt has it without downloading);
#  9. the service is NOT started on a first install until the configuration is edited and
#     the PINs are set (--start starts it then); it prints what is left to do.
set -eu

ROOT=""
PREFIX=/opt/tablectl
CONSOLE=ttyAMA0
START=0
FORCE=0
SYSTEMD=1
RENDER=""
ROLLBACK=0
LAP=0
PY=python3
while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ -d "${2:-}" ] || { echo "$0: --root ${2:-}: no such directory (an image's root: make it first)" >&2
                    exit 2; }
                ROOT=$(cd "$2" && pwd); [ "$ROOT" != / ] || ROOT=""; shift 2 ;;
        --lap) LAP=1; shift ;;
        --prefix) PREFIX=$2; shift 2 ;;
        --console) CONSOLE=$2; shift 2 ;;
        --start) START=1; shift ;;
        --no-start) START=0; shift ;;
        --force) FORCE=1; shift ;;
        --no-systemd) SYSTEMD=0; shift ;;
        --render) RENDER=$2; shift 2 ;;
        --rollback) ROLLBACK=1; shift ;;
        --python) PY=$2; shift 2 ;;
        *) echo "usage: $0 [--root DIR] [--prefix DIR] [--console TTY] [--start] [--force] [--no-systemd]" \
                "[--python PY] [--lap] [--rollback] | --render DIR [--prefix DIR]" >&2
           exit 2 ;;
    esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)

render() {   # the units name /opt/tablectl; rewrite it for another prefix
    for u in tablectl.service tablectl-console@.service tablectl-uplink.service tablectl-lap.service; do
        sed "s#/opt/tablectl#$PREFIX#g" "$SRC/systemd/$u" > "$1/$u"
        chmod 0644 "$1/$u"
    done
}

if [ -n "$RENDER" ]; then
    mkdir -p "$RENDER"
    render "$RENDER"
    exit 0
fi

[ -n "$ROOT" ] || [ "$(id -u)" -eq 0 ] || { echo "$0: run as root (sudo)" >&2; exit 1; }
[ -z "$ROOT" ] || SYSTEMD=0
P="$ROOT$PREFIX"
ETC="$ROOT/etc/tablectl"
STATE="$ROOT/var/lib/tablectl"
say() { echo "install.sh: $*"; }
sysd() { [ "$SYSTEMD" -eq 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; }

# switch PREFIX/current to version $1 (atomically: a new link renamed over the old)
switch_to() {
    new=$1
    migrate=$2
    old=""
    [ -L "$P/current" ] && old=$(readlink "$P/current")
    was_running=0
    if sysd && systemctl is-active --quiet tablectl.service; then
        was_running=1
        say "stopping tablectl.service"
        systemctl stop tablectl.service
    fi
    if [ -n "$old" ] && [ "$old" != "$new" ] && [ -f "$STATE/ledger.sqlite3" ]; then
        dest="$STATE/backups/before-$new-$(date -u +%Y%m%dT%H%M%SZ)"
        install -d -m 0700 "$STATE/backups" "$dest"
        # SQLite's online backup API (the WAL is included), then an integrity check of the copy
        "$P/$new/venv/bin/python" - "$STATE/ledger.sqlite3" "$dest/ledger.sqlite3" <<'PY'
import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
ok = dst.execute("pragma integrity_check").fetchone()[0]
n = dst.execute("select count(*) from sqlite_master").fetchone()[0]
dst.close(); src.close()
if ok != "ok":
    sys.exit(f"install.sh: the backup copy {sys.argv[2]} fails its integrity check: {ok}")
print(f"install.sh: ledger backed up to {sys.argv[2]} (integrity ok, {n} schema objects)")
PY
        if [ -n "$ROOT" ]; then :; elif id tablectl >/dev/null 2>&1; then chown -R tablectl:tablectl "$STATE/backups"; fi
        if [ "$migrate" -eq 0 ]; then
            say "rollback: the ledger is not migrated back (the backup above is the copy from before)"
        elif "$P/$new/venv/bin/tablectl" migrate --help >/dev/null 2>&1; then
            say "migrating the ledger with $new"
            # as root: it reads the root-only key, then works as the state directory's owner
            "$P/$new/venv/bin/tablectl" migrate --state-dir "$STATE" --key-file "$ETC/ledger.key" \
                --witness-dir "$STATE-witness"
        else
            say "NOT DONE: version $new has no 'tablectl migrate'; the ledger is used as it is"
        fi
    fi
    cp "$ETC/software-$new.json" "$ETC/software.json.new"
    chmod 0644 "$ETC/software.json.new"
    mv -f "$ETC/software.json.new" "$ETC/software.json"
    ln -sfn "$new" "$P/current.new"
    mv -T "$P/current.new" "$P/current"
    if [ -n "$old" ] && [ "$old" != "$new" ]; then
        ln -sfn "$old" "$P/previous.new"
        mv -T "$P/previous.new" "$P/previous"
    fi
    say "current: $new${old:+ (previous: $old)}"
    if [ "$was_running" -eq 1 ]; then
        say "starting tablectl.service ($new)"
        systemctl start tablectl.service
    fi
}

if [ "$ROLLBACK" -eq 1 ]; then
    [ -L "$P/previous" ] || { echo "$0: no previous version in $P to roll back to" >&2; exit 1; }
    back=$(readlink "$P/previous")
    [ -x "$P/$back/venv/bin/tablectl" ] || { echo "$0: $P/$back is not an installed version" >&2; exit 1; }
    switch_to "$back" 0
    exit 0
fi

# 1. the bundle
[ -f "$SRC/VERSION" ] && [ -f "$SRC/requirements.txt" ] && [ -d "$SRC/wheelhouse" ] || {
    echo "$0: run me from an unpacked release bundle (systemd/build-release.sh makes one)" >&2; exit 1; }
VERSION=$(cat "$SRC/VERSION")
(cd "$SRC" && sha256sum --quiet --strict -c SHA256SUMS) || { echo "$0: the bundle does not match its SHA256SUMS" >&2; exit 1; }
say "bundle tablectl $VERSION: files match SHA256SUMS"

# 2. user and groups
if [ -z "$ROOT" ]; then
    getent group gpio >/dev/null || groupadd --system gpio
    getent group dialout >/dev/null || groupadd --system dialout
    if ! id tablectl >/dev/null 2>&1; then
        useradd --system --user-group --home-dir /var/lib/tablectl --no-create-home \
                --shell /usr/sbin/nologin --comment "tablectl table controller" tablectl
    fi
    usermod -a -G gpio,dialout tablectl
fi

# 3. the version's code and virtualenv, offline, root-owned
D="$P/$VERSION"
if [ -e "$D" ] && [ "$FORCE" -eq 1 ]; then
    [ "$(readlink "$P/current" 2>/dev/null || true)" != "$VERSION" ] || {
        echo "$0: $VERSION is the current version; --force reinstalls only a version not in use" >&2; exit 1; }
    rm -rf "$D"
fi
if [ -e "$D" ]; then
    say "$D exists: kept (--force to reinstall it)"
else
    install -d -m 0755 "$P"
    trap 'rm -rf "$D"' EXIT   # a half-made version is not left behind
    # (the virtualenv's scripts name their path: it is made where it stays)
    "$PY" -m venv "$D/venv"
    # what a table runs and nothing else: the locked list as it is (--no-deps: colorzero declares
    # setuptools, which nothing imports), and not the setuptools `venv` puts in on Python 3.11
    # (its distutils-precedence.pth would run at every start); the simulators (the bundle's rigs/)
    # are never installed here
    "$D/venv/bin/python" -m pip uninstall -q -y --disable-pip-version-check setuptools >/dev/null 2>&1 || true
    "$D/venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir \
        --no-index --no-deps --find-links "$SRC/wheelhouse" --require-hashes -r "$SRC/requirements.txt"
    "$D/venv/bin/python" -c 'import controller.daemon.service, controller.uplink.uplink, gpiozero, serial' \
        || { echo "$0: the installed version does not import" >&2; exit 1; }
    if [ "$LAP" -eq 1 ]; then   # the LAP's server: its floor view and sign's web stack, from the bundle's lap/
        [ -f "$SRC/lap/requirements.txt" ] || { echo "$0: --lap: this bundle has no lap/ (the LAP's web stack)" >&2
                                                exit 1; }
        "$D/venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir \
            --no-index --no-deps --find-links "$SRC/lap" --find-links "$SRC/wheelhouse" --require-hashes \
            -r "$SRC/lap/requirements.txt"
        "$D/venv/bin/python" -c 'import aiohttp, controller.lap.floor_server' \
            || { echo "$0: --lap: the floor view does not import" >&2; exit 1; }
    fi
    cp -r "$SRC/systemd" "$SRC/docs" "$SRC/README.md" "$SRC/VERSION" "$SRC/requirements.txt" "$D/"
    install -d -m 0755 "$D/config"
    cp -r "$SRC/config/examples" "$D/config/"
    [ -n "$ROOT" ] && [ "$(id -u)" -ne 0 ] || chown -R root:root "$D"
    chmod -R go-w,a+rX "$D"
    trap - EXIT
    say "installed $D (offline, hash-checked wheels)"
fi

# 4. configuration
install -d -m 0755 "$ETC"
if [ ! -e "$ETC/table.toml" ]; then
    install -m 0644 "$D/config/examples/table.toml" "$ETC/table.toml"
    say "installed /etc/tablectl/table.toml from the example: edit pins, ports and profile"
fi

# 5. state directory, the witness of the ledger's head beside it, and the ledger's HMAC key
#    (root-only, 0600, handed over by LoadCredential=; never replaced: a new key makes the old
#    ledger unverifiable)
if [ -z "$ROOT" ]; then
    install -d -m 0700 -o tablectl -g tablectl "$STATE" "$STATE-witness"
else
    install -d -m 0700 "$STATE" "$STATE-witness"
fi
if [ ! -e "$ETC/ledger.key" ]; then
    "$D/venv/bin/tablectl" key init --key-file "$ETC/ledger.key" | sed 's/^/  /'
fi
[ -n "$ROOT" ] && [ "$(id -u)" -ne 0 ] || chown root:root "$ETC/ledger.key"
chmod 0600 "$ETC/ledger.key"
# a linked table's link key (made on the LAP: `tablectl lap --enrol-table T01 --key-out FILE`,
# copied here): root-only like the ledger key (LoadCredential=); its TLS key for libpq, which the
# uplink's user reads itself: root-owned, group tablectl, 0640 (libpq takes a root-owned key so)
if [ -e "$ETC/link.key" ]; then
    [ -n "$ROOT" ] && [ "$(id -u)" -ne 0 ] || chown root:root "$ETC/link.key"
    chmod 0600 "$ETC/link.key"
fi
if [ -e "$ETC/link.pem" ]; then
    [ -n "$ROOT" ] && [ "$(id -u)" -ne 0 ] || chown root:tablectl "$ETC/link.pem"
    chmod 0640 "$ETC/link.pem"
fi

# 6. the software digest of this version, recorded as root, where the service cannot write.
#    Every module is compiled first (pip compiles most; this makes sure), so no process writes a
#    .pyc later, and the compiled files are in the record (--bytecode): Python runs a .pyc whose
#    header matches its source without reading the source, so a swapped .pyc must be seen too.
if ! "$D/venv/bin/python" -m compileall -q -j 0 "$D/venv/lib" >/dev/null; then
    say "some files in $D/venv did not compile (they cannot be imported either; listed by: $D/venv/bin/python -m compileall -q $D/venv/lib)"
fi
"$D/venv/bin/tablectl" verify --record --bytecode --record-file "$ETC/software-$VERSION.json" | sed 's/^/  /'
chmod 0644 "$ETC/software-$VERSION.json"

# 7. make it the current version (an upgrade: stop, back up, migrate, switch, start)
FIRST=0
[ -L "$P/current" ] || FIRST=1
switch_to "$VERSION" 1

# 8. udev rules, units, journald cap, time
install -d -m 0755 "$ROOT/etc/udev/rules.d" "$ROOT/etc/systemd/system" "$ROOT/etc/systemd/journald.conf.d"
install -m 0644 "$D/systemd/99-tablectl.rules" "$ROOT/etc/udev/rules.d/99-tablectl.rules"
SRC="$D" render "$ROOT/etc/systemd/system"
install -m 0644 "$D/systemd/journald-tablectl.conf" "$ROOT/etc/systemd/journald.conf.d/tablectl.conf"
say "journald capped: $(grep -E '^SystemMaxUse=' "$D/systemd/journald-tablectl.conf") (/etc/systemd/journald.conf.d/tablectl.conf)"
TIME="not set up (--root: an image, not this machine)"
if [ -z "$ROOT" ]; then
    TIME="no network time (neither chrony nor systemd-timesyncd)"
    if command -v chronyd >/dev/null 2>&1; then
        TIME="chrony (present)"
    elif [ -x /lib/systemd/systemd-timesyncd ] || [ -x /usr/lib/systemd/systemd-timesyncd ]; then
        TIME="systemd-timesyncd (present)"
    fi
    if [ -x /sbin/fake-hwclock ] || [ -x /usr/sbin/fake-hwclock ]; then
        TIME="$TIME + fake-hwclock (present)"
    elif command -v apt-get >/dev/null 2>&1 && apt-get install -y -qq --no-download fake-hwclock >/dev/null 2>&1; then
        TIME="$TIME + fake-hwclock (installed from apt's cache, offline)"
    else
        TIME="$TIME; fake-hwclock NOT installed (not present, not in apt's cache): a Pi without a clock battery"
        TIME="$TIME boots at its last shutdown time only with it, or with network time"
    fi
    if sysd; then
        systemctl enable fake-hwclock.service >/dev/null 2>&1 || true
        systemctl enable chrony.service >/dev/null 2>&1 || systemctl enable systemd-timesyncd.service >/dev/null 2>&1 || true
    fi
fi
say "time: $TIME"
if sysd; then
    systemctl restart systemd-journald || true
    if command -v udevadm >/dev/null 2>&1; then
        udevadm control --reload
        udevadm trigger --subsystem-match=tty --subsystem-match=gpio || true
    fi
    systemctl daemon-reload
    systemctl disable --now "serial-getty@$CONSOLE.service" >/dev/null 2>&1 || true
    systemctl enable tablectl.service "tablectl-console@$CONSOLE.service"
    # a linked table (docs/linked.md): the uplink runs when /etc/tablectl/uplink.toml exists
    # (from config/examples/uplink.toml; its role's password goes in ~tablectl/.pgpass or the DSN;
    # its link key in /etc/tablectl/link.key, its TLS certificate and key beside it)
    if [ -e "$ETC/uplink.toml" ]; then
        systemctl enable tablectl-uplink.service
        [ -e "$ETC/link.key" ] || say "linked table: put its link key in $ETC/link.key (tablectl lap --enrol-table on the LAP)"
    fi
fi

# 9. what is left to do; the service starts only when the configuration and PINs are done
T="$PREFIX/current/venv/bin/tablectl"
left=""
if cmp -s "$ETC/table.toml" "$D/config/examples/table.toml"; then
    left="$left
  - edit /etc/tablectl/table.toml (table id, profile, pins, serial ports; it is still the example), then
    $T run --config /etc/tablectl/table.toml --check"
fi
missing=$("$D/venv/bin/tablectl" pin list --state-dir "$STATE" | grep 'not set' | cut -d: -f1 | tr '\n' ' ' || true)
if [ -n "$missing" ]; then
    left="$left
  - set the console PINs (missing: $missing):  $T pin set ROLE
    (as root it writes as the state directory's owner, tablectl)"
fi
if [ -z "$left" ] && [ "$FIRST" -eq 1 ] && [ "$START" -eq 1 ] && sysd; then
    systemctl start tablectl.service "tablectl-console@$CONSOLE.service"
    say "started tablectl.service"
elif [ "$FIRST" -eq 1 ] || ! sysd || ! systemctl is-active --quiet tablectl.service; then
    left="$left
  - start it:  systemctl start tablectl.service tablectl-console@$CONSOLE.service  (enabled: it starts at boot)"
fi
if [ -n "$left" ]; then
    echo "tablectl $VERSION is installed in $PREFIX/$VERSION ($PREFIX/current). The service is NOT running. Left to do:$left"
else
    echo "tablectl $VERSION is installed in $PREFIX/$VERSION ($PREFIX/current) and running."
fi
cat <<MSG
  console: the UART /dev/$CONSOLE (115200 8N1), or: runuser -u tablectl -- $T console
  status:  systemctl status tablectl; journalctl -u tablectl
  check:   $T verify   (the installed files against /etc/tablectl/software.json)
  undo:    $PREFIX/current/systemd/install.sh --rollback   (after an upgrade)
MSG
