"""The project tests on its own: real MLCommons data lives in tests/real
(PROVENANCE.md names each file's origin and licence) and nothing in the
project reads from outside it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / "tests" / "real"
# The sibling folder "shared" reached as a relative path, as this machine's
# absolute path, or built as `<something>.parent / "shared"`. The spellings are
# assembled from parts so that this guard names no such path itself.
SIBLING, MACHINE_ROOT = "shared", "/" + "work"
RELATIVE, ABSOLUTE = "../" + SIBLING, MACHINE_ROOT + "/" + SIBLING
OUTSIDE = re.compile("|".join((re.escape(RELATIVE), re.escape(ABSOLUTE),
                               r"\.parent\s*/\s*[\"']" + SIBLING + r"[\"']")))
MAX_BYTES = 10 * 1024 * 1024


def _project_files():
    for folder in ("pipeline", "tests", "benchmarks", "schemas"):
        yield from (p for p in (REPO / folder).rglob("*")
                    if p.is_file() and p.suffix in {".py", ".yaml", ".yml", ".toml", ".cfg", ".json"}
                    and REAL not in p.parents)
    yield from (REPO / name for name in ("Makefile", "dvc.yaml", "params.yaml", "pyproject.toml"))


def test_nothing_reads_outside_the_project():
    this = Path(__file__).resolve()
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in _project_files() if p.resolve() != this
                 for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                 if OUTSIDE.search(line) and not line.lstrip().startswith("#")]   # a comment reads nothing
    assert offenders == []


def test_the_guard_sees_the_old_spellings():
    for line in (f'SHARED = Path(__file__).resolve().parents[1].parent / "{SIBLING}" / "mlperf"',
                 f"open('{RELATIVE}/mlperf/x.json')", f'TREE = "{ABSOLUTE}/mlperf"'):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search('REAL = Path(__file__).resolve().parent / "real"')


def test_every_real_file_has_its_provenance_and_the_copy_stays_small():
    provenance = (REAL / "PROVENANCE.md").read_text(encoding="utf-8")
    entries = sorted(p.name for p in REAL.iterdir() if p.name != "PROVENANCE.md")
    assert entries, "tests/real is empty"
    for name in entries:
        assert f"`{name}" in provenance, f"{name} is not in tests/real/PROVENANCE.md"
    assert "Apache License 2.0" in provenance
    size = sum(p.stat().st_size for p in REAL.rglob("*") if p.is_file())
    assert size < MAX_BYTES, f"tests/real holds {size} bytes"
