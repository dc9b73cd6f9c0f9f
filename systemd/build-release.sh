#!/bin/sh
# Build the offline release bundle (issue 15): one command from a fresh clone,
#
#   systemd/build-release.sh [--out DIR] [--python PY] [--no-pi]
#
# writes DIR/tablectl-VERSION.tar.gz and DIR/tablectl-VERSION.tar.gz.sha256
# (DIR defaults to dist/).  VERSION is pyproject.toml's [project] version.
# The archive holds one directory, tablectl-VERSION/, with
#
#   wheelhouse/        the project's own wheel and every runtime dependency as a wheel,
#                      for the build machine (its python3) AND for Raspberry Pi OS 64-bit
#                      (aarch64, CPython 3.11, glibc 2.36): numpy, PyYAML and lgpio are
#                      compiled, so each has one wheel per platform; a dependency
#                      published only as an sdist is built here into a wheel (it must
#                      then be pure Python: py3-none-any, or the build stops)
#   requirements.txt   hash-locked (`pip install --require-hashes`): tablectl[pi,report]==VERSION
#                      and each dependency pinned with ==, with the SHA-256 of every
#                      wheel of it in wheelhouse/ (both platforms).  Runtime only: the
#                      `test` extra is not in a release.  The `pi` extra is lgpio, the
#                      pin factory the example configuration selects (a manylinux_2_34
#                      wheel for aarch64/cp311 on PyPI, so Debian's python3-lgpio is not needed);
#                      the `report` extra is reportlab, the accounting report's PDF (pure Python;
#                      its Pillow has one wheel per platform).
#                      Not setuptools: colorzero (gpiozero's) declares it but nothing imports
#                      it, and install.sh installs the list as it is (--no-deps)
#   rigs/              NOT installed by install.sh: tablectl-rigs (the simulators hil/ and the
#                      benchmarks bench/, rigs/pyproject.toml) and PyYAML, which only they
#                      need, as wheels, with their own hash-locked requirements.txt; for a
#                      proof run beside a release (check-arm64.sh: `tablectl sim`), never a table
#   systemd/           install.sh, uninstall.sh, the units, the udev rules, the journald
#                      drop-in, check-arm64.sh
#   config/            the example configuration and table profiles (also inside the wheel)
#   README.md docs/install.md VERSION SHA256SUMS (of every file above)
#
# Needs the network (the package index) and python3 with pip; nothing is installed on
# the build machine (a throwaway virtualenv builds the project's wheel).
set -eu

OUT=""
PY=python3
PI=1
DOCS=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=$2; shift 2 ;;
        --python) PY=$2; shift 2 ;;
        --no-pi) PI=0; shift ;;   # the build machine's wheels only (tests: faster, smaller)
        --docs) DOCS=1; shift ;;  # also write the figures into docs/install.md (a full build's, for the docs)
        *) echo "usage: $0 [--out DIR] [--python PY] [--no-pi] [--docs]" >&2; exit 2 ;;
    esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
T0=$(date +%s)
[ -n "$OUT" ] || OUT="$SRC/dist"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

VERSION=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' \
    "$SRC/pyproject.toml")
NAME="tablectl-$VERSION"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
B="$work/$NAME"
WH="$B/wheelhouse"
mkdir -p "$WH" "$B/systemd" "$B/docs"
pip() { "$PY" -m pip --disable-pip-version-check "$@"; }

echo "== $NAME: the project's wheel"
# from a copy of the tracked files (a fresh clone's content; no .venv, build/ or state/)
mkdir "$work/src"
if [ -d "$SRC/.git" ] || [ -f "$SRC/.git" ]; then
    (cd "$SRC" && git ls-files -z --cached --others --exclude-standard) \
        | tar -C "$SRC" --null --no-recursion --ignore-failed-read -T - -cf - | tar -C "$work/src" -xf -
else
    tar -C "$SRC" --exclude=./.venv --exclude=./dist --exclude=./build --exclude=./state -cf - . | tar -C "$work/src" -xf -
fi
pip wheel -q --no-deps -w "$WH" "$work/src"
OWN=$(cd "$WH" && ls tablectl-"$VERSION"-*.whl)
# the simulators and benchmarks: a wheel of their own, at the same version, in rigs/
RIGS="$B/rigs"
mkdir -p "$RIGS"
sed -i "s/^version = .*/version = \"$VERSION\"/" "$work/src/rigs/pyproject.toml"
pip wheel -q --no-deps -w "$RIGS" "$work/src/rigs"
YAML=$("$PY" -c 'import re, sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
print(next(d for d in deps if re.match(r"(?i)pyyaml\b", d)))' "$work/src/rigs/pyproject.toml")

echo "== wheels for the build machine ($("$PY" -c 'import sys, sysconfig; print(sysconfig.get_platform(), sys.implementation.cache_tag)'))"
# sdists allowed here so that a dependency published only as an sdist is found; it is
# then built into a wheel below
pip download -q -d "$work/dl" "$WH/$OWN[pi,report]"
for f in "$work"/dl/*; do
    case "$f" in
        *.whl) mv "$f" "$WH/" ;;
        *) echo "   building a wheel from the sdist $(basename "$f")"
           pip wheel -q --no-deps -w "$work/built" "$f" ;;
    esac
done
if [ -d "$work/built" ]; then
    for w in "$work"/built/*.whl; do
        case "$w" in
            *-py3-none-any.whl|*-py2.py3-none-any.whl) mv "$w" "$WH/" ;;
            *) echo "$0: $(basename "$w") is compiled and has no wheel on the index: cannot ship it for the Pi" >&2
               exit 1 ;;
        esac
    done
fi

pip download -q -d "$RIGS" --only-binary=:all: "$YAML"

if [ "$PI" -eq 1 ]; then
    echo "== wheels for Raspberry Pi OS 64-bit (aarch64, CPython 3.11, glibc 2.36)"
    plat=""
    for g in 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36; do
        plat="$plat --platform manylinux_2_${g}_aarch64"
    done
    # shellcheck disable=SC2086  # $plat is a list of options
    pip download -q -d "$WH" --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux2014_aarch64 $plat --find-links "$WH" "$WH/$OWN[pi,report]"
    # shellcheck disable=SC2086
    pip download -q -d "$RIGS" --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux2014_aarch64 $plat "$YAML"
fi
echo "== the LAP host's web stack (the lap extra: the floor view and the sign), in lap/"
# installed by `install.sh --lap` on the LAP's server only; a table's install leaves it out
LAPW="$B/lap"
mkdir -p "$LAPW"
LAPDEPS=$("$PY" -c 'import sys, tomllib
print(" ".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["lap"]))' "$SRC/pyproject.toml")
# shellcheck disable=SC2086  # a list of requirements
pip download -q -d "$LAPW" --only-binary=:all: $LAPDEPS
if [ "$PI" -eq 1 ]; then
    # shellcheck disable=SC2086
    pip download -q -d "$LAPW" --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux2014_aarch64 $plat $LAPDEPS
fi
for w in "$LAPW"/*.whl; do   # what the wheelhouse holds already is not carried twice
    [ ! -e "$WH/$(basename "$w")" ] || rm -f "$w"
done

# nothing a table runs imports setuptools (colorzero only declares it): not shipped, and
# install.sh installs the locked list without resolving dependencies (--no-deps)
rm -f "$WH"/setuptools-*.whl

echo "== requirements.txt (hash-locked), rigs/requirements.txt"
lock() {   # lock DIR EXTRA-OF-TABLECTL TITLE: the hash-locked requirements of every wheel in DIR
"$PY" - "$1" "$2" "$3" <<'PY'
import hashlib, re, sys
from pathlib import Path

wh, extra, title = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
by: dict[tuple[str, str], list[str]] = {}
for w in sorted(wh.glob("*.whl")):
    name, version = w.name.split("-")[:2]
    key = (re.sub(r"[-_.]+", "-", name).lower(), version)
    by.setdefault(key, []).append(hashlib.sha256(w.read_bytes()).hexdigest())
names = [n for n, _ in by]
twice = sorted({n for n in names if names.count(n) > 1})
if twice:
    sys.exit(f"build-release: two versions of {', '.join(twice)} in the wheelhouse: the platforms resolved differently")
print(f"# {title}, hash-locked (pip install --no-index --no-deps --require-hashes)")
for (name, version), hashes in sorted(by.items()):
    spec = f"{name}{extra}=={version}" if name == "tablectl" else f"{name}=={version}"
    print(spec + "".join(f" \\\n    --hash=sha256:{h}" for h in sorted(set(hashes))))
PY
}
lock "$WH" "[pi,report]" "tablectl release: runtime requirements" > "$B/requirements.txt"
lock "$RIGS" "" "tablectl-rigs: the simulators and benchmarks, NOT for a table (docs/install.md)" > "$RIGS/requirements.txt"
if [ -n "$(ls "$LAPW")" ]; then
    lock "$LAPW" "" "tablectl's lap extra: the LAP host's floor view and sign (install.sh --lap), NOT for a table" \
        > "$LAPW/requirements.txt"
fi

echo "== installer, units, docs"
for f in install.sh uninstall.sh check-arm64.sh tablectl.service tablectl-console@.service \
         tablectl-uplink.service tablectl-lap.service 99-tablectl.rules journald-tablectl.conf; do
    cp "$SRC/systemd/$f" "$B/systemd/$f"
done
chmod 0755 "$B"/systemd/*.sh
cp -r "$SRC/config" "$B/config"
find "$B/config" -name '__pycache__' -prune -exec rm -rf {} +
cp "$SRC/README.md" "$B/README.md"
for d in install.md security.md operations.md linked.md wiring.md; do  # what a technician reads at the table
    cp "$SRC/docs/$d" "$B/docs/$d"
done
echo "$VERSION" > "$B/VERSION"
(cd "$B" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum > SHA256SUMS)

echo "== archive"
# fixed owner, order and times in the tar (the wheels inside carry their own build times)
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$NAME" | gzip -n -9 > "$OUT/$NAME.tar.gz"
(cd "$OUT" && sha256sum "$NAME.tar.gz" > "$NAME.tar.gz.sha256")
echo "wheels: $(ls "$WH" | wc -l) ($(ls "$WH" | tr '\n' ' '))"
echo "rigs (not installed): $(ls "$RIGS" | grep -c '\.whl$') wheels ($(ls "$RIGS" | grep '\.whl$' | tr '\n' ' '))"
echo "lap (install.sh --lap): $(ls "$LAPW" | grep -c '\.whl$') wheels ($(ls "$LAPW" | grep '\.whl$' | tr '\n' ' '))"
echo "archive: $OUT/$NAME.tar.gz ($(du -k "$OUT/$NAME.tar.gz" | cut -f1) KiB)"
echo "sha256: $(cut -d' ' -f1 "$OUT/$NAME.tar.gz.sha256")"
# the figures docs/install.md gives, measured on what was just built (never typed there)
(cd "$SRC" && "$PY" -m tools.releasefigures --bundle "$B" --archive "$OUT/$NAME.tar.gz" \
    --seconds "$(($(date +%s) - T0))" > "$OUT/$NAME.figures.md")
echo "figures: $OUT/$NAME.figures.md"
if [ "$DOCS" -eq 1 ]; then
    (cd "$SRC" && "$PY" -m tools.releasefigures --update docs/install.md < "$OUT/$NAME.figures.md")
    echo "docs/install.md: figures written"
fi
