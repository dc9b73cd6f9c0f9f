#!/bin/sh
# Install tablectl under systemd on a Raspberry Pi (Raspberry Pi OS / Debian 12, Python 3.11).
#
#   sudo systemd/install.sh [--prefix /opt/tablectl] [--console ttyAMA0] [--no-start]
#   systemd/install.sh --render DIR [--prefix PATH]    # only write the units for PATH into DIR (CI)
#
# What it does, in order:
#  1. a system user `tablectl` (no login, no home) in the `gpio` and `dialout` groups;
#  2. the code in PREFIX (root-owned, read-only to the service) with its virtualenv (./bootstrap);
#  3. /etc/tablectl/table.toml from config/examples/table.toml unless one exists (edit it!);
#  3b. the ledger's key /etc/tablectl/ledger.key (root, 0600; `tablectl key init`) unless one exists;
#  4. /var/lib/tablectl (the ledger, PINs, lock-out), /var/lib/tablectl-witness (the witness of
#     the ledger's head) and the software digest of the installed files — our packages and the
#     whole virtualenv — recorded as root in the root-owned /etc/tablectl/software.json
#     (`tablectl verify --record`), where the service cannot write (the configuration's
#     [table] software_record); the service compares at every start;
#  5. the udev rules (stable /dev/tablectl-shoe, -shaker, -sign names) and the units
#     tablectl.service and tablectl-console@CONSOLE.service (the serial getty on that UART is
#     disabled: the UART is the technician console), enabled and (re)started.
# Run it again after every update: it re-records the digest.
set -eu

PREFIX=/opt/tablectl
CONSOLE=ttyAMA0
START=1
RENDER=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX=$2; shift 2 ;;
        --console) CONSOLE=$2; shift 2 ;;
        --no-start) START=0; shift ;;
        --render) RENDER=$2; shift 2 ;;
        *) echo "usage: $0 [--prefix DIR] [--console TTY] [--no-start] | --render DIR [--prefix DIR]" >&2; exit 2 ;;
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

[ "$(id -u)" -eq 0 ] || { echo "$0: run as root (sudo)" >&2; exit 1; }

# 1. user and groups
getent group gpio >/dev/null || groupadd --system gpio
getent group dialout >/dev/null || groupadd --system dialout
if ! id tablectl >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /var/lib/tablectl --no-create-home \
            --shell /usr/sbin/nologin --comment "tablectl table controller" tablectl
fi
usermod -a -G gpio,dialout tablectl

# 2. code and virtualenv, root-owned
if [ "$SRC" != "$PREFIX" ]; then
    mkdir -p "$PREFIX"
    tar -C "$SRC" --exclude=./.venv --exclude=./.git --exclude='__pycache__' --exclude='*.pyc' -cf - . \
        | tar -C "$PREFIX" -xf -
fi
"$PREFIX/bootstrap"
chown -R root:root "$PREFIX"
chmod -R go-w "$PREFIX"

# 3. configuration
install -d -m 0755 /etc/tablectl
if [ ! -e /etc/tablectl/table.toml ]; then
    install -m 0644 "$PREFIX/config/examples/table.toml" /etc/tablectl/table.toml
    echo "installed /etc/tablectl/table.toml from the example: edit pins, ports and profile"
fi

# 3b. the ledger's HMAC key: root-only (0600), handed to the service by LoadCredential=;
#     never replaced (a new key makes the old ledger unverifiable)
[ -e /etc/tablectl/ledger.key ] || "$PREFIX/.venv/bin/tablectl" key init --key-file /etc/tablectl/ledger.key
chown root:root /etc/tablectl/ledger.key
chmod 0600 /etc/tablectl/ledger.key

# 4. state directory (and the witness of the ledger's head beside it) and the software digest
install -d -m 0700 -o tablectl -g tablectl /var/lib/tablectl
install -d -m 0700 -o tablectl -g tablectl /var/lib/tablectl-witness
# as root, after the code is root-owned (step 2): the record is the service's yardstick, never its to change
"$PREFIX/.venv/bin/tablectl" verify --record --record-file /etc/tablectl/software.json
chmod 0644 /etc/tablectl/software.json

# 5. udev rules and units
install -m 0644 "$SRC/systemd/99-tablectl.rules" /etc/udev/rules.d/99-tablectl.rules
if command -v udevadm >/dev/null 2>&1; then
    udevadm control --reload
    udevadm trigger --subsystem-match=tty --subsystem-match=gpio || true
fi
render /etc/systemd/system
systemctl daemon-reload
systemctl disable --now "serial-getty@$CONSOLE.service" >/dev/null 2>&1 || true
systemctl enable tablectl.service "tablectl-console@$CONSOLE.service"
if [ "$START" -eq 1 ]; then
    systemctl restart tablectl.service "tablectl-console@$CONSOLE.service"
fi
# a linked table (docs/linked.md): the uplink runs when /etc/tablectl/uplink.toml exists
# (from config/examples/uplink.toml; its role's password goes in ~tablectl/.pgpass or the DSN)
if [ -e /etc/tablectl/uplink.toml ]; then
    systemctl enable tablectl-uplink.service
    [ "$START" -eq 1 ] && systemctl restart tablectl-uplink.service
fi

cat <<MSG
tablectl installed in $PREFIX.
  check the configuration, the pin factory and the serial ports:  $PREFIX/.venv/bin/tablectl run --config /etc/tablectl/table.toml --check
  set the console PINs:     runuser -u tablectl -- $PREFIX/.venv/bin/tablectl pin set technician --state-dir /var/lib/tablectl
                            (and floorperson, dealer)
  console:                  the UART /dev/$CONSOLE (115200 8N1), or: runuser -u tablectl -- $PREFIX/.venv/bin/tablectl console
  status:                   systemctl status tablectl; journalctl -u tablectl
MSG
