#!/bin/sh
# Proof on the target architecture (issue 15): unpack a release bundle into a clean
# Debian bookworm arm64 root and install and run it there WITHOUT NETWORK, under
# qemu-user emulation.  Slow (a debootstrap of arm64 Debian, Python under qemu):
# not part of CI; anyone can run it on a Debian/Ubuntu amd64 machine as root:
#
#   sudo systemd/check-arm64.sh dist/tablectl-VERSION.tar.gz [--root DIR] [--mirror URL] [--keep]
#
# 1. debootstrap (Debian's package) + qemu-user-static and binfmt-support (Debian's
#    packages; installed with apt-get when missing) make DIR (default /var/tmp/tablectl-arm64),
#    a minimal bookworm arm64 root with python3 and python3-venv (Raspberry Pi OS 64-bit is
#    bookworm, CPython 3.11, aarch64); an existing DIR made by this script is reused;
# 2. the bundle is copied in, checked against its .sha256 and unpacked;
# 3. inside the root, in a new network namespace with no interface but loopback (unshare
#    --net: pip could not reach an index even if asked), as root:
#      install.sh --no-systemd            (the virtualenv from the aarch64 wheels, offline)
#      tablectl verify                    (the installed files against the recorded digest)
#      tablectl run --check --offline     (the example configuration; files only)
#      tablectl run --check               (also loads the lgpio pin factory: in a chroot with
#                                          no /dev/gpiochip* it must FAIL with exit 2 naming the key)
#      tablectl sim --rounds 3            (three simulated rounds on the installed code; the
#                                          simulators, the bundle's rigs/, are installed BESIDE the
#                                          release, /opt/tablectl-rigs, never into it: `verify`
#                                          is run again after, and must still match)
#    and prints each step's exit status and time.
set -eu

BUNDLE=""
ROOTFS=/var/tmp/tablectl-arm64
MIRROR=http://deb.debian.org/debian
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOTFS=$2; shift 2 ;;
        --mirror) MIRROR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -*) echo "usage: $0 BUNDLE.tar.gz [--root DIR] [--mirror URL] [--keep]" >&2; exit 2 ;;
        *) BUNDLE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift ;;
    esac
done
[ -n "$BUNDLE" ] && [ -f "$BUNDLE" ] || { echo "usage: $0 BUNDLE.tar.gz [--root DIR] [--mirror URL] [--keep]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$0: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
NAME=$(basename "$BUNDLE" .tar.gz)
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# 1. tools and the arm64 root
need=""
command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
[ -e /usr/bin/qemu-aarch64-static ] || need="$need qemu-user-static"
command -v update-binfmts >/dev/null 2>&1 || need="$need binfmt-support"
if [ -n "$need" ]; then
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $need
fi
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { echo "$0: qemu-aarch64 binfmt is not registered" >&2; exit 1; }

t=$(now)
if [ ! -e "$ROOTFS/.tablectl-debootstrap-done" ]; then
    rm -rf "$ROOTFS"
    echo "== debootstrap bookworm arm64 into $ROOTFS (from $MIRROR)"
    debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv bookworm "$ROOTFS" "$MIRROR" \
        > "$ROOTFS.debootstrap.log" 2>&1 || { tail -20 "$ROOTFS.debootstrap.log"; exit 1; }
    touch "$ROOTFS/.tablectl-debootstrap-done"
    echo "   debootstrap: $(took "$t"), $(du -sm "$ROOTFS" | cut -f1) MB"
else
    echo "== reusing $ROOTFS"
fi
echo "   arm64 root: $(chroot "$ROOTFS" uname -m), $(chroot "$ROOTFS" python3 --version)"

# 2. the bundle
if [ -f "$BUNDLE.sha256" ]; then
    (cd "$(dirname "$BUNDLE")" && sha256sum --quiet -c "$(basename "$BUNDLE").sha256")
    echo "== $(basename "$BUNDLE"): matches its .sha256"
fi
rm -rf "$ROOTFS/root/$NAME" "$ROOTFS/opt/tablectl" "$ROOTFS/opt/tablectl-rigs" "$ROOTFS/etc/tablectl" \
       "$ROOTFS/var/lib/tablectl" "$ROOTFS/var/lib/tablectl-witness"
tar -C "$ROOTFS/root" -xzf "$BUNDLE"

mounted=""
cleanup() {
    for m in $mounted; do umount -l "$m" 2>/dev/null || true; done
    [ "$KEEP" -eq 1 ] || rm -rf "$ROOTFS/root/$NAME"
}
trap cleanup EXIT
mount -t proc proc "$ROOTFS/proc" && mounted="$ROOTFS/proc $mounted"
mount --bind /dev "$ROOTFS/dev" && mounted="$ROOTFS/dev $mounted"
# the simulator talks to its devices over ptys
mount --bind /dev/pts "$ROOTFS/dev/pts" && mounted="$ROOTFS/dev/pts $mounted"

# 3. inside, with no network
NS="unshare --net"
if ! unshare --net true 2>/dev/null; then
    NS=""
    echo "   NOTE: unshare --net is not permitted here: the network is NOT cut off; install.sh still uses --no-index"
fi
step() {   # step NAME COMMAND...: run COMMAND in the arm64 root, print its status and time
    label=$1; shift
    s=$(now)
    set +e
    # shellcheck disable=SC2086
    $NS chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@" \
        > "$ROOTFS.step.log" 2>&1
    rc=$?
    set -e
    sed 's/^/   | /' "$ROOTFS.step.log" | tail -25
    echo "== $label: exit $rc, $(took "$s")"
    return 0
}
T=/opt/tablectl/current/venv/bin/tablectl
step "network in the root" sh -c "python3 -c 'import socket; socket.create_connection((\"pypi.org\", 443), 5)' \
    && echo 'network: REACHABLE' || echo 'network: unreachable'"
step "install.sh --no-systemd (offline)" sh "/root/$NAME/systemd/install.sh" --no-systemd
step "tablectl verify" "$T" verify
step "tablectl run --check --offline" "$T" run --config /etc/tablectl/table.toml --check --offline
step "tablectl run --check (lgpio, no /dev/gpiochip in a chroot: exit 2 expected)" \
    "$T" run --config /etc/tablectl/table.toml --check
step "lgpio imports" /opt/tablectl/current/venv/bin/python -c "import lgpio, platform; print('lgpio', lgpio.__file__, platform.machine())"
step "no simulators, benchmarks or setuptools in the installed tree" sh -c \
    "ls /opt/tablectl/current/venv/lib/python3*/site-packages | grep -iE '^(hil|bench|yaml|setuptools)' && exit 1 || echo none"
step "tablectl sim without the simulators (says what to install: exit 2 expected)" "$T" sim --rounds 1
step "the simulators beside the release (/opt/tablectl-rigs, offline)" /opt/tablectl/current/venv/bin/python -m pip \
    install -q --no-index --no-deps --find-links "/root/$NAME/rigs" --require-hashes \
    -r "/root/$NAME/rigs/requirements.txt" --target /opt/tablectl-rigs
step "tablectl sim --rounds 3" env PYTHONPATH=/opt/tablectl-rigs "$T" sim --rounds 3 --state-dir /tmp/tablectl-sim
step "tablectl diagram (refused: an installed tree; exit 2 expected)" "$T" diagram
step "tablectl verify (after the sim and diagram: still a match)" "$T" verify
echo "== done: $(took "$t") in all"
