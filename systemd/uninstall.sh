#!/bin/sh
# Uninstall tablectl (issue 15; docs/install.md):
#
#   sudo /opt/tablectl/current/systemd/uninstall.sh [--purge] [--root DIR] [--prefix PATH] [--no-systemd]
#
# Stops and removes the units, the udev rules, the journald drop-in and every installed
# version (PREFIX).  The state directory /var/lib/tablectl (the ledger: the record of
# play, which the regulations require to be kept) and /etc/tablectl (configuration,
# software records) are KEPT, and so is the `tablectl` user, unless --purge is given.
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
    systemctl disable tablectl.service >/dev/null 2>&1 || true
fi
rm -f "$ROOT/etc/systemd/system/tablectl.service" "$ROOT/etc/systemd/system/tablectl-console@.service" \
      "$ROOT/etc/udev/rules.d/99-tablectl.rules" "$ROOT/etc/systemd/journald.conf.d/tablectl.conf"
rm -rf "${ROOT}${PREFIX:?}"
echo "uninstall.sh: removed $PREFIX, the units, the udev rules and the journald drop-in"
if [ "$PURGE" -eq 1 ]; then
    rm -rf "$ROOT/var/lib/tablectl" "$ROOT/etc/tablectl"
    [ -n "$ROOT" ] || ! id tablectl >/dev/null 2>&1 || userdel tablectl || true
    echo "uninstall.sh: --purge: removed /var/lib/tablectl (the ledger), /etc/tablectl and the tablectl user"
else
    echo "uninstall.sh: kept /var/lib/tablectl (the ledger, PINs) and /etc/tablectl; --purge removes them"
fi
if [ "$SYSTEMD" -eq 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi
