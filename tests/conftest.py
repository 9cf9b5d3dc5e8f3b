"""Shared fixtures and helpers for the mlrepro test suite.

Real MLCommons data, trimmed to what the tests read, lives in ``tests/real``
(origins and licence in tests/real/PROVENANCE.md); the project's own small
samples live in ``tests/data``. Nothing here reads outside the project.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from pipeline.core import rules
from pipeline.ingest import table
from pipeline.cli import cli

REPO = Path(__file__).resolve().parents[1]
REAL = Path(__file__).resolve().parent / "real"
SHARED = REAL   # the name tests used when the data lived outside the project
DATA = Path(__file__).resolve().parent / "data"

UNVERIFIED_FOOTNOTE = "Result not verified by MLCommons Association."
# A time well before the v6.0 deadline in schemas/rounds.yaml (2026-02-27T13:00-08:00).
ON_TIME = "2026-02-20T10:00:00+00:00"
# A time after it.
LATE = "2026-03-20T10:00:00+00:00"

# Hypothesis profiles: small for CI (the default), larger for local digging.
settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
# `make fuzz`: the parser fuzzers of tests/test_fuzz.py, long.
settings.register_profile("fuzz", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# The project's own rules, loaded once: what library calls in tests are given
# (the CLI loads its own, from --schemas or $MLREPRO_SCHEMAS, at its edge).
RULES = rules.Rules.load(REPO / "schemas")


def normalised(result, ctx):
    """A reader's whole output normalised on its own, as an ingest does with
    each file: the frame of its accepted rows, its findings and dispositions."""
    from types import SimpleNamespace

    from pipeline.ingest.normalise import Accepted, Normaliser

    accepted = Accepted()
    done = Normaliser(RULES, accepted).add(result, ctx)
    return SimpleNamespace(frame=accepted.frame(), findings=done.findings, dispositions=done.dispositions)


def shared(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """A folder built once per test run, for the tests to read (a test that
    changes it works on its own copy). Under pytest-xdist every worker has its
    own basetemp inside the run's; the first worker to ask builds it there,
    under a lock, and the others wait for it and read it. ``build`` fills the
    empty folder it is given; a build that fails leaves no folder behind."""
    base = tmp_path_factory.getbasetemp()
    top = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = top / f"shared-{name}", top / f"shared-{name}.done"
    with open(top / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder


def project_copy(dest: Path) -> Path:
    """The project's files (tracked, and new ones not ignored: a change not
    yet committed is in it) as a new git repository on main at DEST, with the
    project's .venv linked in: what `git clone` and `make install` give."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = raw.decode("utf-8")
        source = REPO / rel
        if not source.exists() and not source.is_symlink():     # deleted, not yet committed
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    (dest / ".venv").symlink_to(REPO / ".venv")
    installed = REPO / ".venv" / ".installed"
    if installed.exists():
        # make in the copy must find the linked .venv up to date: a reinstall
        # there would point the shared editable install at this temporary copy
        stamp = installed.stat().st_mtime - 1
        for name in ("pyproject.toml", "uv.lock", "requirements/uv.txt"):
            os.utime(dest / name, (stamp, stamp))
    who = ["-c", "user.name=Maintainer", "-c", "user.email=maintainer@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], [*who, "commit", "-q", "-m", "the project"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)
    return dest


# A PATH with no trace of the project's virtual environment.
BARE_PATH = os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin") if Path(p).is_dir())


@pytest.fixture(scope="session")
def made_project(tmp_path_factory) -> Path:
    """A copy of the project (project_copy) after one run of its whole
    pipeline, `.venv/bin/dvc repro` with a PATH lacking .venv/bin, as a
    fresh clone's first `make run` leaves it (the stages call bin/mlrepro,
    whatever PATH says). Built once per test run (shared), for every test
    that reads what a run writes; what the run printed is in
    ``first-run.txt`` beside it. A test that changes the project, or runs
    anything in it, works in its own ``shutil.copytree(..., symlinks=True)``
    (a copy is a second or two, a run from nothing is the pipeline's whole
    time)."""
    def build(folder: Path) -> None:
        project = project_copy(folder / "project")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLREPRO_", "VIRTUAL_ENV", "GITHUB_"))}
        env.update(PATH=BARE_PATH, DVC_NO_ANALYTICS="1", GIT_CONFIG_NOSYSTEM="1")
        done = subprocess.run([str(REPO / ".venv" / "bin" / "dvc"), "repro"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"dvc repro exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        (folder / "first-run.txt").write_text(done.stdout, encoding="utf-8")

    return shared(tmp_path_factory, "made-project", build) / "project"


# The files that take longest, each with a pipeline run or more (measured with
# --durations=0; most first). `make test` sends files to its two workers in
# collection order (pytest-xdist, --dist loadfile --no-loadscope-reorder): these
# go first and the many short files fill in behind them, so that no long file
# starts last and runs alone at the end.
LONGEST_FIRST = ("test_workflow.py", "test_dvc_pipeline.py", "test_docs.py", "test_no_discovery.py",
                 "test_audit.py", "test_hostile.py", "test_bench.py", "test_next_round.py")


def pytest_collection_modifyitems(items):
    # a stable sort: each file's tests keep their order
    items.sort(key=lambda item: (LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST
                                 else len(LONGEST_FIRST)))


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    """A developer's shell may set these; every test starts without them (the
    pipeline itself never writes the environment)."""
    monkeypatch.delenv("MLREPRO_SCHEMAS", raising=False)
    monkeypatch.delenv("MLREPRO_DEBUG", raising=False)


@pytest.fixture
def broken_schemas(tmp_path, monkeypatch):
    """MLREPRO_SCHEMAS pointing at an empty folder: the command line's rules."""
    empty = tmp_path / "empty-schemas"
    empty.mkdir()
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(empty))
    return empty


def run(*args: object, expect: int | None = None):
    """Invoke ``mlrepro`` in-process. Asserts that no traceback ever reaches the
    user and, when ``expect`` is given, the exit code."""
    result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="mlrepro")
    assert "Traceback" not in result.output, result.output
    assert "Traceback" not in result.stderr, result.stderr
    if expect is not None:
        assert result.exit_code == expect, (
            f"exit {result.exit_code}, expected {expect}\nstdout:\n{result.stdout}\n"
            f"stderr:\n{result.stderr}\nexception: {result.exception!r}")
    return result


def invoke(cwd: Path, *args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    """``mlrepro ARGS`` run in CWD as the console script runs there (without
    the shell's GITHUB_* and MLREPRO_* variables, with ENV), in this process:
    what ``subprocess.run`` would return, without an interpreter's start and
    imports. A test whose point is the process itself runs the console script."""
    unset = {k: None for k in os.environ if k.startswith(("GITHUB_", "MLREPRO_"))}
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="mlrepro",
                                    env={**unset, **(env or {})})
    # an exception the CLI let through would be the console script's traceback
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return subprocess.CompletedProcess(["mlrepro", *map(str, args)], result.exit_code, result.stdout,
                                       result.stderr)


def run_json(*args: object, expect: int | None = None) -> dict:
    """Invoke with JSON output (``--format json``); stdout must be exactly one JSON object."""
    result = run(*args, "--format", "json", expect=expect)
    doc = json.loads(result.stdout)
    assert isinstance(doc, dict)
    return doc


# ---- the project's results-csv template ---------------------------------------------

RESULTS_HEADER = ("submitter", "system", "accelerator", "accelerators_per_node", "nodes",
                  "model", "scenario", "value", "units", "division", "availability")

MI355X = "AMD Instinct MI355X 288GB HBM3E"


def results_row(**overrides: object) -> dict:
    """One row of the results-csv template. Default figures: a single MI355X
    node on llama2-70b Server at 100282 tokens/s (AMD's v6.0 figure)."""
    row = {"submitter": "Dell", "system": "PowerEdge_XE9785_8xMI355X",
           "accelerator": MI355X, "accelerators_per_node": "8", "nodes": "1",
           "model": "llama2-70b-99", "scenario": "Server", "value": "100282",
           "units": "Tokens/s", "division": "closed", "availability": "available"}
    row.update({k: str(v) for k, v in overrides.items()})
    return row


def write_results_csv(path: Path, rows: list[dict], header: tuple[str, ...] | None = None) -> Path:
    header = header or (tuple(rows[0]) if rows else RESULTS_HEADER)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(header), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in header})
    return path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ---- the canonical results table ----------------------------------------------------

def canonical_row(**overrides: object) -> dict:
    """One canonical row; defaults: AMD's verified v6.0 MI355X llama2-70b Server."""
    row = {"round": "v6.0", "submitter": "AMD", "system": "8xMI355X_2xEPYC_9575F",
           "system_name": None, "accelerator": "MI355X", "composition": "MI355X:8",
           "accelerators_per_node": 8, "nodes": 1, "total_accelerators": 8,
           "model": "llama2-70b-99", "scenario": "Server", "value": 100000.0,
           "units": "Tokens/s", "division": "closed", "availability": "available",
           "status": "verified", "result_id": None, "file": "v6.0/AMD/v1/results.csv", "line": 2,
           "submission_version": 1}
    row.update(overrides)
    row.setdefault("accelerator_variant", row["accelerator"])   # the v2 table's column, never null
    # the display text, made from the place as ingest makes it (nothing reads it back)
    row.setdefault("source", row["file"] if row["line"] is None else f"{row['file']}:{row['line']}")
    return row


def write_canonical(path: Path, rows: list[dict]) -> Path:
    from pipeline.core.files import write_table
    write_table(table.to_frame(rows), path)
    return path


@pytest.fixture
def root(tmp_path) -> Path:
    """An empty submissions root."""
    path = tmp_path / "submissions"
    path.mkdir()
    return path


def submit(root: Path, source: Path, submitter: str = "Dell", status: str = "verified",
           submitted_at: str = ON_TIME, round_: str = "v6.0", *extra: object, expect: int = 0):
    """``mlrepro submit`` into ``root`` (on time, verified, v6.0, Dell by default).
    A test replays history: a version declared verified and submitted on time,
    sealed today, after the deadline, so ``--force`` (outside git, ingest
    trusts the declared time)."""
    force = ("--force",) if status == "verified" else ()
    return run("submit", source, "--submitter", submitter, "--round", round_,
               "--status", status, "--submitted-at", submitted_at, "--root", root, *force, *extra,
               expect=expect)


# ---- headless Chromium (the report's and the Data Docs' browser tests) -----------------

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed "
                                    "(.ci/run installs Debian's chromium; locally: apt-get install -y chromium)")


def chromium(tmp_path: Path, *args: str):
    """Headless Chromium with a fresh profile and no network at all (every host
    name fails to resolve), so a page shows what it shows offline."""
    import subprocess

    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})


def writable_copy(src: Path, dst: Path) -> Path:
    """A copy of (part of) the read-only real data that a test may change."""
    shutil.copytree(src, dst)
    for folder, dirs, files in os.walk(dst):
        for name in dirs + files:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    Path(dst).chmod(Path(dst).stat().st_mode | stat.S_IWUSR)
    return dst


@pytest.fixture
def no_project_params(tmp_path, monkeypatch):
    """Run where there is no ./params.yaml (compare and claims read it by
    default), so the built-in defaults (4.0 %, AMD) apply unless a test passes --params."""
    monkeypatch.chdir(tmp_path)
