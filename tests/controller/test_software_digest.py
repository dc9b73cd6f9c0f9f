"""The software digest covers the whole installed tree the service imports (
Clock: "Software digest"): editing a file of a dependency in the virtualenv or
adding a ``.pth`` file is a mismatch — also at start-up, where unchanged files are
not read again — and the record lives where the service's user cannot write.

A throwaway virtualenv (no pip) whose site-packages holds a dependency of its own
and a ``.pth`` that reaches this checkout and its dependencies."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from controller.boot import selfcheck as S

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _bytecode_beside_its_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release's compiled files lie in ``__pycache__`` beside their sources, where the
    interpreters these tests start look: not in the test run's own cache (tests/conftest.py)."""
    monkeypatch.setattr(sys, "pycache_prefix", None)


@pytest.fixture
def venv(tmp_path: Path) -> SimpleNamespace:
    d = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(d)], check=True)
    py = d / "bin" / "python"
    sp = Path(subprocess.check_output([py, "-c", "import site; print(site.getsitepackages()[0])"], text=True).strip())
    # this checkout and the test venv's dependencies, as an installed project's .pth would
    (sp / "tablectl-dev.pth").write_text(f"{ROOT}\n" + "".join(f"{p}\n" for p in site.getsitepackages()))
    dep = sp / "fakedep"
    dep.mkdir()
    (dep / "__init__.py").write_text("ANSWER = 42\n")
    return SimpleNamespace(py=py, sp=sp, dep=dep / "__init__.py", record=tmp_path / "etc" / "software.json")


def verify(v: SimpleNamespace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [v.py, "-m", "controller", "verify", "--record-file", str(v.record), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def startup_check(v: SimpleNamespace) -> str:
    """What the start-up self-check concludes, in that interpreter (the record trusted for unchanged files)."""
    code = (
        "import sys; from pathlib import Path; from controller.boot import selfcheck as S; "
        "rec = S.load_record(Path(sys.argv[1])); files = S.manifest(trust=rec); "
        "print('match' if S.digest_of(files) == rec.digest else S.describe_mismatch(S.compare(rec.files, files)))"
    )
    return subprocess.check_output([v.py, "-c", code, str(v.record)], text=True, timeout=60).strip()


@pytest.mark.slow
def test_editing_a_dependency_or_adding_a_pth_is_a_mismatch(venv):
    made = verify(venv, "--record")
    assert made.returncode == 0, made.stderr
    rec = json.loads(venv.record.read_text())
    assert "site-packages/fakedep/__init__.py" in rec["files"] and "site-packages/tablectl-dev.pth" in rec["files"]
    assert "controller/daemon/service.py" in rec["files"]
    assert verify(venv).returncode == 0 and startup_check(venv) == "match"

    # a dependency's file edited, its size and modification time put back as they were
    st = venv.dep.stat()
    venv.dep.write_text("ANSWER = 43\n")
    os.utime(venv.dep, ns=(st.st_atime_ns, st.st_mtime_ns))
    out = verify(venv)
    assert out.returncode == 1 and "changed: site-packages/fakedep/__init__.py" in out.stdout, out.stdout
    assert startup_check(venv) == "changed: site-packages/fakedep/__init__.py"
    venv.dep.write_text("ANSWER = 42\n")
    assert verify(venv).returncode == 0 and startup_check(venv) == "match"

    # a .pth added: code run by every interpreter start
    (venv.sp / "zz-evil.pth").write_text("import os\n")
    out = verify(venv)
    assert out.returncode == 1 and "added: site-packages/zz-evil.pth" in out.stdout, out.stdout
    assert startup_check(venv) == "added: site-packages/zz-evil.pth"


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_the_record_is_kept_outside_the_state_directory_and_refused_when_the_service_can_write_it(
    tmp_path, monkeypatch
):
    """``[table] software_record`` (default /etc/tablectl/software.json); on a real table a
    record the service's own (unprivileged) user could rewrite is a start-up problem."""
    from controller.settings.hardware import load_hardware

    example = ROOT / "config" / "examples" / "table.toml"
    assert load_hardware(example).software_record == Path("/etc/tablectl/software.json")

    state = tmp_path / "state"
    state.mkdir()
    record = tmp_path / "software.json"
    S.record_digest(record)
    hw = SimpleNamespace(profile=SimpleNamespace(progressive=None), state_dir=state, software_record=record)
    ledger = SimpleNamespace(verify=lambda: [])
    rep = S.run_all(hw, ledger, require_digest=True, rng_test=lambda n: [])
    assert rep.results["software"] == "pass" and not rep.problems, rep.problems
    monkeypatch.setattr(os, "geteuid", lambda: 999)  # the service's user, not root
    rep = S.run_all(hw, ledger, require_digest=True, rng_test=lambda n: [])
    assert rep.results["software"] == "fail"
    assert any("can be changed by the service's user" in p for p in rep.problems), rep.problems


def _swap_in_bytecode(source: Path, other_code: str) -> Path:
    """Replace ``source``'s compiled file with one of ``other_code`` whose header still names
    ``source``'s size and modification time: Python then runs it without reading the source."""
    import importlib.util
    import py_compile

    pyc = Path(importlib.util.cache_from_source(str(source)))
    st = source.stat()
    fake = source.with_name("_other.py")
    fake.write_text(other_code)
    py_compile.compile(str(fake), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    fake.unlink()
    data = bytearray(pyc.read_bytes())
    data[8:12] = int(st.st_mtime).to_bytes(4, "little")  # the header of a timestamp .pyc: flags 0,
    data[12:16] = (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")  # then the source's mtime and size
    pyc.write_bytes(bytes(data))
    return pyc


@pytest.mark.slow
def test_a_record_with_bytecode_finds_a_replaced_pyc_that_a_sources_only_record_misses(venv):
    """A release is compiled at installation and recorded with ``--bytecode`` (systemd/install.sh):
    a ``.pyc`` swapped for other code runs although every source is unchanged."""
    import compileall

    for pkg in ("controller", "drivers", "hil", "bench", "config"):  # nothing left to compile meanwhile
        compileall.compile_dir(str(ROOT / pkg), quiet=1)
    subprocess.run([venv.py, "-c", "import fakedep"], check=True)  # its .pyc, as pip compiles at install
    answer = [venv.py, "-c", "import fakedep; print(fakedep.ANSWER)"]
    assert subprocess.check_output(answer, text=True).strip() == "42"

    sources_only = verify(venv, "--record")
    assert sources_only.returncode == 0, sources_only.stderr
    pyc = _swap_in_bytecode(venv.dep, "ANSWER = 43\n")
    assert subprocess.check_output(answer, text=True).strip() == "43"  # other code runs...
    assert verify(venv).returncode == 0 and startup_check(venv) == "match"  # ...unseen by the sources' digest

    subprocess.run([venv.py, "-m", "compileall", "-q", "-f", str(venv.dep)], check=True)  # as installed
    made = verify(venv, "--record", "--bytecode")
    assert made.returncode == 0 and "(compiled files included)" in made.stdout, made.stdout + made.stderr
    name = "site-packages/fakedep/__pycache__/" + pyc.name
    assert name in json.loads(venv.record.read_text())["files"]
    assert verify(venv).returncode == 0 and startup_check(venv) == "match"
    _swap_in_bytecode(venv.dep, "ANSWER = 43\n")
    out = verify(venv)
    assert out.returncode == 1 and f"changed: {name}" in out.stdout, out.stdout
    assert startup_check(venv) == f"changed: {name}"


def test_bytecode_goes_with_record(venv):
    out = verify(venv, "--bytecode")
    assert out.returncode == 2 and "--bytecode goes with --record" in out.stderr


@pytest.mark.slow
@pytest.mark.soak
def test_the_digest_covers_what_the_unit_executes_the_venv_scripts_and_pyvenv_cfg(venv):
    """Systemd runs the virtualenv's ``bin/tablectl``, and ``pyvenv.cfg`` says which
    interpreter and whether the system's site-packages are read: both were outside the digest."""
    script = venv.py.parent / "tablectl"
    script.write_text(f"#!{venv.py}\nfrom controller.cli import main\nmain()\n")
    made = verify(venv, "--record")
    assert made.returncode == 0, made.stderr
    files = json.loads(venv.record.read_text())["files"]
    assert {"venv/bin/tablectl", "venv/pyvenv.cfg", "venv/bin/python"} <= set(files), sorted(files)[-8:]
    script.write_text(f"#!{venv.py}\nimport os; os.system('id')\nfrom controller.cli import main\nmain()\n")
    out = verify(venv)
    assert out.returncode == 1 and "changed: venv/bin/tablectl" in out.stdout, out.stdout
    assert startup_check(venv) == "changed: venv/bin/tablectl"
    cfg = venv.py.parent.parent / "pyvenv.cfg"
    cfg.write_text(
        cfg.read_text().replace("include-system-site-packages = false", "include-system-site-packages = true")
    )
    assert "changed: venv/pyvenv.cfg" in verify(venv).stdout
    (venv.py.parent / "python3").unlink()
    (venv.py.parent / "python3").symlink_to("/bin/sh")  # an interpreter link pointed elsewhere
    assert "changed: venv/bin/python3" in verify(venv).stdout
