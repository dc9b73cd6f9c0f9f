#!/bin/sh
# Uninstall tablectl (issue 15; docs/install.md):
#
#   sudo /opt/tablectl/current/systemd/uninstall.sh [--purge] [--root DIR] [--prefix PATH] [--no-systemd]
#
# Stops and removes everything install.sh made but the table's record: the units
# (tablectl, tablectl-console@, tablectl-uplink, tablectl-lap), the udev rules, the journald
# drop-in and every installed version (PREFIX).  The state directory /var/lib/tablectl (the
# ledger: the record of play, which the regulations require to be kept), the witness of its
# head /var/lib/tablectl-witness and /etc/tablectl (configuration, the ledger's key, software
# records) are KEPT together (a ledger without its key or its witness could not be checked;
# a witness without its ledger would tilt a reinstall), and so is the `tablectl` user.
# --purge removes them too, all of them, and says so: a reinstall then starts a new ledger.
set -eu
ROOT=""
PREFIX=/opt/tablectl
PURGE=0
SYSTEMD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT=$(cd "$2" && pwd); [ "$ROOT" != / ] || ROOT=""; shift 2 ;;
        --prefix) PREFIX=$2; shift 2 ;;
        --purge) PURGE=1; shift ;;
        --no-systemd) SYSTEMD=0; shift ;;
        *) echo "usage: $0 [--purge] [--root DIR] [--prefix PATH] [--no-systemd]" >&2; exit 2 ;;
    esac
done
[ -n "$ROOT" ] || [ "$(id -u)" -eq 0 ] || { echo "$0: run as root (sudo)" >&2; exit 1; }
[ -z "$ROOT" ] || SYSTEMD=0
if [ "$SYSTEMD" -eq 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    units=$(systemctl list-units --all --plain --no-legend 'tablectl*' | awk '{print $1}')
    # shellcheck disable=SC2086
    [ -z "$units" ] || systemctl disable --now $units || true
    systemctl disable tablectl.service tablectl-uplink.service tablectl-lap.service >/dev/null 2>&1 || true
fi
# every unit install.sh renders (install.sh render()), and the rest it installed
UNITS="tablectl.service tablectl-console@.service tablectl-uplink.service tablectl-lap.service"
for u in $UNITS; do
    rm -f "$ROOT/etc/systemd/system/$u"
done
rm -f "$ROOT/etc/udev/rules.d/99-tablectl.rules" "$ROOT/etc/systemd/journald.conf.d/tablectl.conf"
rm -rf "${ROOT}${PREFIX:?}"
echo "uninstall.sh: removed $PREFIX, the units ($UNITS), the udev rules and the journald drop-in"
STATE=/var/lib/tablectl
if [ "$PURGE" -eq 1 ]; then
    rm -rf "$ROOT$STATE" "$ROOT$STATE-witness" "$ROOT/etc/tablectl"
    [ -n "$ROOT" ] || ! id tablectl >/dev/null 2>&1 || userdel tablectl || true
    echo "uninstall.sh: --purge: removed $STATE (the ledger, PINs, backups), $STATE-witness (the witness"
    echo "  of the ledger's head), /etc/tablectl (configuration, the ledger key ledger.key, the software"
    echo "  records) and the tablectl user; a reinstall starts a new ledger with a new key"
else
    echo "uninstall.sh: kept, together: $STATE (the ledger, PINs, backups), $STATE-witness (its witness)"
    echo "  and /etc/tablectl (configuration, the ledger key, software records); a reinstall goes on with"
    echo "  them. --purge removes them"
fi
if [ "$SYSTEMD" -eq 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi
