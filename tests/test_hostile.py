"""The hostile corpus (tests/hostile/): every bad input, through every command
that reads it, exits 1 with a located finding, is accepted by no result set,
and never exits 3 or 4 or prints a traceback.

The corpus and the codes each input must produce are listed in
tests/hostile/README.md; this module reads that list. Each case is
parametrised per (input, command) so that a failure names both.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

import gitrepo
from conftest import ON_TIME, canonical_row, run, run_json, write_canonical

HOSTILE = Path(__file__).resolve().parent / "hostile"
CONTROL = HOSTILE / "control"
PLACE = re.compile(r"\b(line|lines|record|key|column|folder|byte|character|whole file)\b")
LIMITED = {"file_bytes": 600}   # caps of schemas/version_folder.yaml, lowered for the size cases
CAPS = {"results-over-size-limit.csv": LIMITED, "version-file-over-size-limit": LIMITED}
# (round, submitter, format) of the sealed version a raw input is gated in
SEAL = {"results": ("v6.0", "Dell", "results-csv"),
        "checker": ("v5.1", "GigaComputing", "mlcommons-summary-csv"),
        "summary": ("v5.1", "MiTAC", "mlcommons-summary-json")}
SEALED_AT = {"v6.0": ON_TIME, "v5.1": "2025-07-30T16:00:00+00:00"}
GAPS: dict = {}  # known gaps (input, command) -> reason; none left
# Inputs whose rows are accepted, but only into the post-deadline set, labelled unverified.
POST_DEADLINE_ONLY = {"version-verified-after-deadline"}


def corpus() -> dict[str, set[str]]:
    """{input name: codes it may produce}, from the tables of the README."""
    out = {}
    for line in (HOSTILE / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[a-z0-9.-]+`", cells[0]) and "-" in cells[0]:
            codes = set(re.findall(r"`([a-z0-9-]+)`", cells[1]))
            if codes:
                out[cells[0].strip("`")] = codes
    return out


CORPUS = corpus()


def kind(name: str) -> str:
    return name.split("-", 1)[0]


def cases(*kinds: str, commands=("validate", "ingest", "gate")) -> list:
    out = []
    for name in sorted(CORPUS):
        if kind(name) not in kinds:
            continue
        for command in commands:
            gap = GAPS.get((name, command))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            out.append(pytest.param(name, command, id=f"{name}-{command}", marks=marks))
    return out


def schemas_copy(monkeypatch, tmp_path: Path) -> Path:
    """The rules the in-process runs read ($MLREPRO_SCHEMAS, the CLI's edge): a copy of
    the project's (or of the copy already in use), made once per test."""
    schemas = tmp_path / "schemas-of-the-test"
    if not schemas.is_dir():
        shutil.copytree(os.environ.get("MLREPRO_SCHEMAS") or Path(__file__).resolve().parents[1] / "schemas",
                        schemas)
        monkeypatch.setenv("MLREPRO_SCHEMAS", str(schemas))
    return schemas


@pytest.fixture
def env(monkeypatch, tmp_path):
    """Per-input rules (a low size cap), for in-process runs."""
    def apply(name: str) -> None:
        if name in CAPS:
            path = schemas_copy(monkeypatch, tmp_path) / "version_folder.yaml"
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            data["caps"].update(CAPS[name])
            path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return apply


# ---- the corpus itself ------------------------------------------------------------------

def test_the_readme_lists_every_input_and_only_inputs():
    present = {p.name for p in HOSTILE.iterdir() if p.name not in ("README.md", "control")}
    assert set(CORPUS) == present
    assert len(CORPUS) >= 40


def test_hand_written_manifests_seal_their_files():
    """So that a version input fails for its content, not its seal (but the hash case)."""
    checked = 0
    for manifest in sorted(HOSTILE.glob("version-*/*/*/v*/manifest.yaml")):
        try:
            data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
            entry = data["files"][0]
        except (yaml.YAMLError, UnicodeDecodeError, KeyError, TypeError):
            continue                       # an unparseable manifest is the point of its case
        target = manifest.parent / str(entry["path"])
        if not target.is_file() or target.is_symlink() or ".." in entry["path"] or entry["path"].startswith("/"):
            continue
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        case = manifest.relative_to(HOSTILE).parts[0]
        assert (digest == entry["sha256"]) == (case != "version-hash-mismatch"), manifest
        checked += 1
    assert checked >= 10


# ---- what every failure must look like --------------------------------------------------

def open_round(monkeypatch, tmp_path: Path) -> None:
    """In-process gate runs without git read $MLREPRO_SCHEMAS: a copy whose round
    deadlines lie ahead of the gate's own clock (which nothing moves back)."""
    rounds = schemas_copy(monkeypatch, tmp_path) / "rounds.yaml"
    data = yaml.safe_load(rounds.read_text(encoding="utf-8"))
    for info in data["rounds"].values():
        info["submission_deadline"] = "2099-01-01T00:00:00+00:00"
    rounds.write_text(yaml.safe_dump(data), encoding="utf-8")


def located(findings: list[dict], names_file, codes: set[str]) -> None:
    """An error finding names the file and its place; one has an expected code."""
    errors = [f for f in findings if f["severity"] == "error"]
    assert errors, "no error finding"
    here = [f for f in errors if names_file(f["file"]) and PLACE.search(f["place"])]
    assert here, f"no error finding names the file and a place: {errors}"
    assert codes & {f["code"] for f in errors}, f"expected one of {codes}, got {[f['code'] for f in errors]}"


# ---- raw files: results CSV, checker CSV, published JSON ---------------------------------

def _raw_args(name: str) -> list[str]:
    return ["--round", "v6.0"] if kind(name) == "results" and name != "results-unknown-round.csv" else []


def seal(root: Path, source: Path, round_: str, submitter: str, fmt: str, number: int = 1,
         when: str | None = None, status: str = "verified") -> Path:
    """A version folder holding ``source`` with a hand-written manifest whose
    sha256 is the file's, so that the content is what is judged."""
    folder = root / round_ / submitter / f"v{number}"
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / source.name)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    (folder / "manifest.yaml").write_text(
        f"submitter: {submitter}\nround: {round_}\nversion: {number}\n"
        f"submitted_at: '{when or SEALED_AT[round_]}'\nstatus: {status}\nfiles:\n"
        f"- path: {source.name}\n  format: {fmt}\n  sha256: {digest}\n", encoding="utf-8")
    return folder


def check_raw(path: Path, command: str, tmp_path: Path, monkeypatch, expect: int, codes: set[str]):
    name = path.name
    if command == "validate":
        doc = run_json("validate", path, *_raw_args(name), expect=expect)
        assert doc["summary"]["accepted"] == (0 if expect else 1)
        named = lambda file: file.endswith(name)  # noqa: E731
    elif command == "ingest":
        out = tmp_path / "out.csv"
        doc = run_json("ingest", path, "-o", out, "--status", "verified", *_raw_args(name), expect=expect)
        assert len(doc["rows"]) == (0 if expect else 1)
        assert len(out.read_text(encoding="utf-8").splitlines()) == (1 if expect else 2)
        named = lambda file: file.endswith(name)  # noqa: E731
    else:
        round_, submitter, fmt = SEAL[kind(name)] if kind(name) in SEAL else SEAL["results"]
        root = tmp_path / "submissions"
        version = seal(root, path, round_, submitter, fmt)
        monkeypatch.chdir(tmp_path)              # not a git repository: PATHs are gated as named
        open_round(monkeypatch, tmp_path)
        doc = run_json("gate", version, "--root", root, "--params", tmp_path / "none.yaml", expect=expect)
        accepted = [r for r in doc["rows"] if r["outcome"] == "accepted"]
        assert len(accepted) == (0 if expect else 1), accepted
        display = f"{root.as_posix()}/{round_}/{submitter}/v1/"   # under the root as it was given
        named = lambda file: file.startswith(display)  # noqa: E731
    if expect:
        located(doc["findings"], named, codes)


@pytest.mark.parametrize("control", ["results.csv", "checker.csv", "summary.json"])
@pytest.mark.parametrize("command", ["validate", "ingest", "gate"])
def test_the_raw_controls_pass(control, command, tmp_path, monkeypatch):
    name = {"results.csv": "results-control.csv", "checker.csv": "checker-control.csv",
            "summary.json": "summary-control.json"}[control]
    path = tmp_path / "in" / name
    path.parent.mkdir()
    shutil.copyfile(CONTROL / control, path)
    check_raw(path, command, tmp_path, monkeypatch, 0, set())


@pytest.mark.parametrize(("name", "command"), cases("results", "checker", "summary"))
def test_a_hostile_file_fails_located_and_accepts_nothing(name, command, tmp_path, monkeypatch, env):
    env(name)
    path = tmp_path / "in" / name
    path.parent.mkdir()
    shutil.copyfile(HOSTILE / name, path)
    check_raw(path, command, tmp_path, monkeypatch, 1, CORPUS[name])


# ---- LoadGen logs, in a one-result submission tree --------------------------------------------

def tree_around(log: Path, tmp_path: Path) -> Path:
    from _loadgen import make_tree

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copyfile(log, run_dir / "mlperf_log_detail.txt")
    (run_dir / "mlperf_log_summary.txt").write_text("Result is : VALID\n", encoding="utf-8")
    make_tree(tmp_path / "tree", {"Server": run_dir})
    return tmp_path / "tree"


def check_tree(tree: Path, command: str, tmp_path: Path, expect: int, codes: set[str]):
    if command == "validate":
        doc = run_json("validate", tree, expect=expect)
        assert doc["summary"]["accepted"] == (0 if expect else 1)
    else:
        doc = run_json("ingest", tree, "-o", tmp_path / "out.csv", "--status", "verified", expect=expect)
        assert len(doc["rows"]) == (0 if expect else 1)
    if expect:
        located(doc["findings"], lambda file: file.endswith("performance/run_1/mlperf_log_detail.txt"), codes)


@pytest.mark.parametrize("command", ["validate", "ingest"])
def test_the_loadgen_control_passes(command, tmp_path):
    check_tree(tree_around(CONTROL / "mlperf_log_detail.txt", tmp_path), command, tmp_path, 0, set())


@pytest.mark.parametrize(("name", "command"), cases("loadgen", commands=("validate", "ingest")))
def test_a_hostile_loadgen_log_fails_located_and_accepts_nothing(name, command, tmp_path, env):
    env(name)
    check_tree(tree_around(HOSTILE / name, tmp_path), command, tmp_path, 1, CORPUS[name])


# ---- version folders ---------------------------------------------------------------------------

def make_links(name: str, root: Path, tmp_path: Path) -> None:
    """The links of the link cases (not committed: see the corpus README)."""
    v1 = root / "v6.0" / "Dell" / "v1"
    if name == "version-symlink-outside-root":
        outside = tmp_path / "outside" / "results.csv"
        outside.parent.mkdir()
        shutil.copyfile(CONTROL / "results.csv", outside)
        (v1 / "results.csv").symlink_to(outside)
    elif name == "version-symlink-loop":
        (v1 / "results.csv").symlink_to(v1 / "loop")
        (v1 / "loop").symlink_to(v1 / "results.csv")


def version_root(name: str, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the input as a submissions root, and the display of its newest version."""
    root = tmp_path / "submissions"
    shutil.copytree(HOSTILE / name, root, symlinks=True)
    make_links(name, root, tmp_path)
    newest = max((p for p in root.glob("*/*/v*") if p.is_dir()), key=lambda p: int(p.name[1:]))
    return root, newest.relative_to(root).as_posix()


def check_version(root: Path, display: str, command: str, tmp_path: Path, monkeypatch, name: str,
                  codes: set[str]):
    mine = lambda source: str(source).startswith(display + "/")  # noqa: E731
    named = lambda file: file.startswith(f"{root.as_posix()}/{display}/")  # noqa: E731  (under the root as given)
    post_only = name in POST_DEADLINE_ONLY
    if command == "validate":
        doc = run_json("validate", root, expect=1)
        assert doc["summary"]["verified"] == 0
        assert doc["summary"]["accepted"] == doc["summary"]["post_deadline"] if post_only else \
            doc["summary"]["accepted"] == 0
    elif command == "ingest":
        doc = run_json("ingest", root, "-o", tmp_path / "out.csv", expect=1)
        rows = [r for r in doc["rows"] if mine(r["source"])]
        if post_only:
            assert rows and {(r["status"], r["label"]) for r in rows} == {("post-deadline", "unverified")}
        else:
            assert rows == []
    else:
        monkeypatch.chdir(tmp_path)
        if not post_only:
            open_round(monkeypatch, tmp_path)
        doc = run_json("gate", root / display, "--root", root, "--params", tmp_path / "none.yaml", expect=1)
        accepted = [r for r in doc["rows"] if r["outcome"] == "accepted"]
        if post_only:
            assert accepted and {r["status"] for r in accepted} == {"post-deadline"}
        else:
            assert accepted == []
    located(doc["findings"], named, codes)


@pytest.mark.parametrize("command", ["validate", "ingest", "gate"])
def test_the_version_control_passes(command, tmp_path, monkeypatch):
    root = tmp_path / "submissions"
    seal(root, CONTROL / "results.csv", "v6.0", "Dell", "results-csv")
    monkeypatch.chdir(tmp_path)
    if command == "gate":
        open_round(monkeypatch, tmp_path)
        doc = run_json("gate", root / "v6.0/Dell/v1", "--root", root, "--params", tmp_path / "none.yaml", expect=0)
        assert [r["outcome"] for r in doc["rows"]] == ["accepted"]
    else:
        args = ["-o", tmp_path / "out.csv"] if command == "ingest" else []
        doc = run_json(command, root, *args, expect=0)
        assert doc["summary"]["accepted"] == 1


@pytest.mark.parametrize(("name", "command"), cases("version"))
def test_a_hostile_version_fails_located_and_accepts_nothing(name, command, tmp_path, monkeypatch, env):
    env(name)
    root, display = version_root(name, tmp_path)
    check_version(root, display, command, tmp_path, monkeypatch, name, CORPUS[name])


def test_a_second_version_claiming_the_first_number_fails_the_gate_in_git(tmp_path, monkeypatch):
    """Versioning against a git base: main holds v1; the change adds v2, whose
    manifest says it is v1."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(HOSTILE / "version-two-claim-same-number", repo / "submissions")
    v2 = repo / "submissions" / "v6.0" / "Dell" / "v2"
    parked = tmp_path / "v2"
    shutil.move(v2, parked)
    open_round(monkeypatch, tmp_path)
    shutil.copytree(tmp_path / "schemas-of-the-test", repo / "schemas")   # policy is read from the base
    gitrepo.base_then_branch(repo, "Hostile Test", "change", "base: Dell v1")
    shutil.move(parked, v2)
    gitrepo.commit(repo, "Dell v2")                  # the gate judges the commit
    monkeypatch.chdir(repo)
    doc = run_json("gate", "--base", "main", expect=1)
    assert doc["summary"]["versions"] == ["v6.0/Dell/v2"]
    assert [r for r in doc["rows"] if r["outcome"] == "accepted"] == []
    located(doc["findings"], lambda file: file.startswith("submissions/v6.0/Dell/v2/"), {"manifest-mismatch"})


def test_a_version_folder_linked_from_outside_the_root_is_an_escape(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    seal(elsewhere, CONTROL / "results.csv", "v6.0", "Dell", "results-csv")
    root = tmp_path / "submissions"
    (root / "v6.0" / "Dell").mkdir(parents=True)
    (root / "v6.0" / "Dell" / "v1").symlink_to(elsewhere / "v6.0" / "Dell" / "v1")
    doc = run_json("ingest", root, "-o", tmp_path / "out.csv", expect=1)
    assert doc["rows"] == []
    located(doc["findings"], lambda file: file.startswith(f"{root.as_posix()}/v6.0/Dell/v1"), {"path-escape"})


# ---- claims ledgers -----------------------------------------------------------------------------

@pytest.fixture
def results(tmp_path) -> Path:
    return write_canonical(tmp_path / "results.csv", [
        canonical_row(),
        canonical_row(system="8xMI300X_2xEPYC_9575F", accelerator="MI300X", composition="MI300X:8",
                      value=50000.0, file="v6.0/AMD/v1/results.csv", line=3)])


def test_the_ledger_control_holds(results, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = run_json("claims", CONTROL / "claims.yaml", results, expect=0)
    assert [r["verdict"] for r in doc["rows"]] == ["holds"]


@pytest.mark.parametrize("name", [n for n in sorted(CORPUS) if kind(n) == "ledger"])
def test_a_hostile_ledger_fails_located(name, results, tmp_path, monkeypatch, env):
    env(name)
    monkeypatch.chdir(tmp_path)
    ledger = tmp_path / name
    shutil.copyfile(HOSTILE / name, ledger)
    doc = run_json("claims", ledger, results, expect=1)
    assert not [r for r in doc["rows"] if r["verdict"] in ("holds", "cherry-picked")]
    located(doc["findings"], lambda file: file.endswith(name), CORPUS[name])


def test_no_hostile_input_ran_anything():
    """The python tags of the corpus were never constructed."""
    assert not Path("/var/tmp/mlrepro-pwned").exists()


# ---- security: nothing in a submission is executed or unpickled ------------------------------

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"
SAFE_LOADER = "getattr(yaml, 'CSafeLoader', yaml.SafeLoader)"     # as ast.unparse writes it
FORBIDDEN_MODULES = {"pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "joblib"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "os.system", "os.popen", "os.execv", "os.spawnv",
                   "yaml.unsafe_load", "yaml.full_load", "yaml.load_all", "pd.read_pickle", "pandas.read_pickle",
                   "np.load", "numpy.load", "pickle.load", "pickle.loads"}


def _name(node) -> str:
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _package_calls():
    import ast

    for path in sorted(PIPELINE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            yield path, source, node


GIT_CALLERS = {"versioning.py", "policy.py", "clock.py", "gitstore.py"}   # the gate's base, its policy, the repository holding the visibility record, what git stores


def test_nothing_is_executed_or_unpickled():
    """No pickle/marshal, eval/exec, os.system, shell=True anywhere in the
    package; subprocess only to run git, always with an argument list."""
    import ast

    problems = []
    for path, source, node in _package_calls():
        where = f"{path.relative_to(PIPELINE.parent)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = {a.name.split(".")[0] for a in node.names} | {(node.module or "").split(".")[0]
                                                                  if isinstance(node, ast.ImportFrom) else ""}
            if names & FORBIDDEN_MODULES:
                problems.append(f"{where}: imports {names & FORBIDDEN_MODULES}")
            if "subprocess" in names and path.name not in GIT_CALLERS:
                problems.append(f"{where}: subprocess outside the gate")
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in FORBIDDEN_CALLS:
            problems.append(f"{where}: calls {name}")
        for kw in node.keywords:
            if kw.arg in ("shell", "allow_pickle") and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                problems.append(f"{where}: {kw.arg}={ast.unparse(kw.value)}")
        if name.startswith("subprocess."):
            first = node.args[0] if node.args else None
            if path.name not in GIT_CALLERS or not isinstance(first, ast.List):
                problems.append(f"{where}: {name} must be a git call with an argument list")
    assert problems == []


def test_yaml_is_read_with_the_safe_loader_everywhere():
    """Every yaml.load/compose/parse names a safe loader (yaml.safe_load is one)."""
    import ast

    problems, calls = [], 0
    for path, source, node in _package_calls():
        where = f"{path.relative_to(PIPELINE.parent)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Assign) and any(_name(t) in ("loader",) for t in node.targets):
            if ast.unparse(node.value) != SAFE_LOADER:
                problems.append(f"{where}: loader = {ast.unparse(node.value)}")
        if isinstance(node, ast.FunctionDef) and node.name == "_loader":
            returned = [ast.unparse(n.value) for n in ast.walk(node) if isinstance(n, ast.Return)]
            if returned != [SAFE_LOADER]:
                problems.append(f"{where}: _loader returns {returned}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and _name(node.func.func) == "_loader":
            calls += 1          # _loader()(text): a parser of the loader checked above
            continue
        if isinstance(node, ast.Call) and _name(node.func) in ("yaml.safe_load", "yaml.safe_load_all"):
            calls += 1
            continue
        if not (isinstance(node, ast.Call) and _name(node.func) in ("yaml.load", "yaml.compose", "yaml.parse",
                                                                       "yaml.compose_all", "yaml.parse_all")):
            continue
        calls += 1
        loader = next((ast.unparse(kw.value) for kw in node.keywords if kw.arg == "Loader"), None)
        if loader not in (SAFE_LOADER, "loader", "_loader()", "yaml.SafeLoader", "yaml.CSafeLoader"):
            problems.append(f"{where}: {_name(node.func)} with Loader={loader}")
    assert problems == [] and calls >= 4


# ---- the policy refuses no real file ---------------------------------------------------------

SHARED = Path(__file__).resolve().parent / "real"   # tests/real/PROVENANCE.md
REPO_ROOT = Path(__file__).resolve().parents[1]


def test_no_real_or_shipped_file_breaks_the_hygiene_policy():
    """No BOM, CRLF, control character or mojibake in any of the real MLCommons
    files (CSV held to the partner-text policy, everything else to the
    manifest one, stricter than what their readers apply), nor in the shipped
    submissions and ledger: the policy changes how none of them is read."""
    from pipeline.core import textcheck

    files = [p for p in sorted(SHARED.rglob("*")) if p.is_file()]
    files += [p for p in sorted((REPO_ROOT / "submissions").rglob("*")) if p.is_file()]
    files += [REPO_ROOT / "claims.yaml"]
    assert len(files) > 150   # tests/real (PROVENANCE.md) and the shipped submissions
    # AMD's v6.1 gpt-oss-120b accuracy logs hold a progress bar's lone carriage returns on
    # one line, as published; the tree reader reads them (tests/test_reader_tree.py)
    progress_bar = {f"9x8xMI355X_2xEPYC_9575F/gpt-oss-120b/{s}/accuracy/accuracy.txt"
                    for s in ("Offline", "Server")}
    for path in files:
        checks = textcheck.TABULAR if path.suffix == ".csv" else textcheck.DOCUMENT
        if any(path.as_posix().endswith(p) for p in progress_bar):
            [found] = textcheck.check(path.read_bytes().decode("utf-8"), path.name, checks)
            assert (found.code, found.where.line) == ("crlf-line-ends", 40)
            assert "lone CR" in found.found and "CRLF" not in found.found
            checks = tuple(c for c in checks if c != "crlf-line-ends")
        assert textcheck.check(path.read_bytes().decode("utf-8"), path.name, checks) == [], path


@pytest.mark.parametrize(("text", "is_mojibake"), [
    ("CDNA\u00c3\u201a\u00a04", True),          # CDNAÃ‚ 4: a no-break space, double-encoded
    ("CDNA\u00c2\u00a04", True),                # CDNAÂ 4: a no-break space read as Latin-1
    ("Soci\u00c3\u00a9t\u00c3\u00a9", True),    # SociÃ©tÃ©
    ("it\u00e2\u20ac\u2122s", True),            # itâ€™s
    ("100\u00e2\u20ac\u00af282", True),         # a narrow no-break space read as cp1252
    ("S\u00e3o Paulo / S\u00c3O PAULO", False),
    ("\u00c5ngstr\u00f6m, na\u00efve, \u00c9dition", False),
    ("MI300X \u2014 192GB \u00b7 100\u00a0282 \u00a9 AMD", False),
    ("\u00c3", False),
])
def test_mojibake_is_told_from_real_accented_text(text, is_mojibake):
    from pipeline.core import textcheck

    found = textcheck.check(text, "x.csv", ("mojibake",))
    assert bool(found) == is_mojibake, found


def test_a_column_named_twice_after_blank_lines_is_found_on_the_header_line(tmp_path):
    from pipeline.core import textcheck
    from pipeline.core.model import Source

    [f] = textcheck.check("\n\nsubmitter,value,value\nDell,1,2\n", Source("r.csv"))
    assert (f.code, f.where) == ("duplicate-column", Source("r.csv", line=3, column="value"))
