"""`mlrepro gate`: every case runs the command in a temporary git repository
with real commits: a base on `main` (the project's policy -- schemas/ with a
round v9.9 whose deadline is ahead, added as a maintainer would, and
params.yaml -- then AMD's reference v1 and a partner's v1, sealed with
`mlrepro submit`), then a branch with the change. The command runs in this
process (the interpreter's start and imports are most of a gate's time); one
case per exit code runs the console script itself, as CI does."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ON_TIME, LATE, REPO, invoke, shared
from gitrepo import commit, git, init

ROUND = "v9.9"
FUTURE_ROUND = f"""  {ROUND}:
    opens: "2026-01-01T00:00:00+00:00"
    submission_deadline: "2099-01-01T00:00:00+00:00"
    publication_date: "2099-02-01"
    estimated: {{submission_deadline: true, publication_date: true}}
    note: A test round whose deadline is still ahead.
"""
PARAMS = "compare:\n  tolerance_pct: 4.0\n  reference_submitter: AMD\n"


def add_policy(repo: Path) -> None:
    """The project's schemas/ with the future round appended, params.yaml and
    dvc.yaml (which names the generated files)."""
    shutil.copytree(REPO / "schemas", repo / "schemas")
    shutil.copy(REPO / "dvc.yaml", repo / "dvc.yaml")
    rounds = repo / "schemas" / "rounds.yaml"
    rounds.write_text(rounds.read_text(encoding="utf-8") + FUTURE_ROUND, encoding="utf-8")
    (repo / "params.yaml").write_text(PARAMS, encoding="utf-8")

MLREPRO = REPO / ".venv" / "bin" / "mlrepro"
PYTHON = REPO / ".venv" / "bin" / "python"
HEADER = ("submitter,system,accelerator,accelerators_per_node,nodes,model,scenario,value,units,"
          "division,availability")
MI355X = "AMD Instinct MI355X 288GB HBM3E"


def csv_text(submitter: str, values: dict[str, str], system: str = "8xMI355X_2xEPYC_9575F") -> str:
    """A results-csv with one llama2-70b-99 row per scenario (value as written)."""
    lines = [HEADER] + [f"{submitter},{system},{MI355X},8,1,llama2-70b-99,{sc},{v},Tokens/s,closed,available"
                        for sc, v in values.items()]
    return "\n".join(lines) + "\n"


AMD = {"Server": "100282", "Offline": "110000"}
DELL_SYSTEM = "PowerEdge_XE9785_8xMI355X"


def mlrepro(repo: Path, *args: object, env: dict | None = None, process: bool = False) -> subprocess.CompletedProcess:
    """``mlrepro ARGS`` in REPO: in this process (conftest.invoke), or, with
    PROCESS, the console script itself, as CI runs it."""
    if not process:
        done = invoke(repo, *args, env=env)
    else:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))}
        full_env.update(env or {})
        done = subprocess.run([str(MLREPRO), *map(str, args)], cwd=repo, capture_output=True,
                              text=True, env=full_env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def submit(repo: Path, text: str, submitter: str, status: str = "verified",
           when: str = ON_TIME, name: str = "results.csv", round_: str = ROUND, *extra: object) -> None:
    source = Path(tempfile.mkdtemp(dir=repo.parent)) / name
    source.write_text(text, encoding="utf-8")
    force = ("--force",) if status == "verified" else ()   # declared verified into a round now closed, too
    done = mlrepro(repo, "submit", source, "--submitter", submitter, "--round", round_,
                   "--status", status, "--submitted-at", when, "--root", "submissions", *force, *extra,
                   env={"MLREPRO_SCHEMAS": str(repo / "schemas")})   # the partner's own checkout
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="session")
def base_repo(tmp_path_factory) -> Path:
    """The base repository, built once for the whole run (conftest.shared):
    every module that imports this fixture, and every xdist worker, reads the
    same one; a test changes its own copy (``repo``)."""
    return shared(tmp_path_factory, "gate-base", lambda folder: base_repository(folder / "repo")) / "repo"


def base_repository(repo: Path) -> Path:
    """main: AMD v1 (reference) and Dell v1 (agrees), committed."""
    init(repo, "Gate Test")
    add_policy(repo)
    commit(repo, "policy: the project's schemas with round v9.9, params.yaml", when="2026-01-02T00:00:00Z")
    submit(repo, csv_text("AMD", AMD), "AMD")
    submit(repo, csv_text("Dell", {"Server": "99000"}, DELL_SYSTEM), "Dell")
    commit(repo, "base: AMD v1 and Dell v1", when="2026-02-21T00:00:00Z")
    return repo


@pytest.fixture
def repo(base_repo, tmp_path) -> Path:
    """A copy of the base repository on a branch `pr`."""
    copy = tmp_path / "repo"
    shutil.copytree(base_repo, copy, symlinks=True)
    git(copy, "checkout", "-q", "-b", "pr")
    return copy


def gate(repo: Path, *args: object, env: dict | None = None, process: bool = False) -> subprocess.CompletedProcess:
    """``mlrepro gate --base main ARGS`` (PROCESS: the console script, as CI runs it)."""
    return mlrepro(repo, "gate", "--base", "main", *args, env=env, process=process)


def sealed_version(repo: Path, submitter: str, number: int, text: str, name: str = "results.csv",
                   when: str = ON_TIME, round_: str = ROUND, folder_name: str | None = None) -> Path:
    """A version folder written by hand (not via submit), its manifest sealing the file."""
    folder = repo / "submissions" / round_ / submitter / (folder_name or f"v{number}")
    folder.mkdir(parents=True)
    (folder / name).write_bytes(text.encode("utf-8"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (folder / "manifest.yaml").write_text(
        f"submitter: {submitter}\nround: {round_}\nversion: {number}\n"
        f"submitted_at: '{when}'\nstatus: verified\n"
        f"files:\n- path: {name}\n  format: results-csv\n  sha256: {digest}\n", encoding="utf-8")
    return folder


# ---- exit 0 ----------------------------------------------------------------------------

def test_a_good_new_version_passes(repo):
    submit(repo, csv_text("Dell", {"Server": "101000", "Offline": "108000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    done = gate(repo, "--format", "json", process=True)   # the console script's exit 0, as CI runs it
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert doc["summary"]["verdict"] == "pass"
    assert doc["summary"]["versions"] == ["v9.9/Dell/v2"]
    assert doc["summary"]["base"] == "main" and doc["summary"]["versioning"] == "checked"
    assert [(r["scenario"], r["verdict"]) for r in doc["rows"]] == [("Server", "agree"), ("Offline", "agree")]
    assert [r["file"] for r in doc["rows"]] == ["submissions/v9.9/Dell/v2/results.csv"] * 2
    assert doc["findings"] == []


def test_nothing_changed_passes(repo):
    done = gate(repo)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "gate: passed (nothing to gate)"


def test_the_default_base_is_main_without_origin(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    done = mlrepro(repo, "gate", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["base"] == "main"


def test_the_gate_judges_the_head_commit_and_worktree_adds_uncommitted_changes(repo):
    """By default the HEAD commit is judged, never the working tree; --worktree
    (before a commit) judges uncommitted and untracked files too."""
    submit(repo, csv_text("Dell", {"Server": "80000"}, DELL_SYSTEM), "Dell")
    done = gate(repo)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "gate: passed (nothing to gate)"
    assert f"head: HEAD {git(repo, 'rev-parse', 'HEAD')[:12]}" in done.stdout
    done = gate(repo, "--worktree")
    assert done.returncode == 1
    assert "gated: v9.9/Dell/v2" in done.stdout and "head: working tree" in done.stdout


# ---- deviations ------------------------------------------------------------------------

def test_a_deviating_result_fails_with_junit_and_github_annotations(repo):
    submit(repo, csv_text("Dell", {"Server": "101000", "Offline": "95000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2 with a low Offline figure")
    path = "submissions/v9.9/Dell/v2/results.csv"

    github = gate(repo, "--format", "github", process=True)   # the console script's exit 1
    assert github.returncode == 1
    errors = [line for line in github.stdout.splitlines() if line.startswith("::error ")]
    assert errors == [
        f"::error file={path},line=3,title=deviates-from-reference::Dell llama2-70b-99 Offline "
        "deviates from the reference by -13.64%25 (expected within ±4.0%25 of 110000.0 "
        "(8xMI355X_2xEPYC_9575F, submissions/v9.9/AMD/v1/results.csv:3); found 95000.0 (-13.64%25)) "
        "[line 3, column value]"]

    junit = gate(repo, "--format", "junit", "--output", "junit.xml")
    assert junit.returncode == 1
    suite = ET.parse(repo / "junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "1"
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("file"), c.get("line")) for c in failed] == [(path, "3")]
    assert failed[0].find("failure").get("type") == "deviates-from-reference"
    names = {c.get("name") for c in suite.iter("testcase")}
    assert f"file {path}" in names and "file submissions/v9.9/Dell/v2/manifest.yaml" in names
    assert f"{path}:2 llama2-70b-99 Server {DELL_SYSTEM}" in names


def test_markdown_summary_for_the_step_summary(repo):
    submit(repo, csv_text("Dell", {"Server": "80000"}, DELL_SYSTEM), "Dell", status="post-deadline",
           when=LATE)
    commit(repo, "Dell v2, post-deadline")
    done = gate(repo, "--format", "markdown")
    assert done.returncode == 1
    text = done.stdout
    assert text.startswith("## ❌ mlrepro gate: failed")
    assert "| `v9.9/Dell/v2` | 1 | 0 | 1 | 0 | 0 | 1 |" in text
    assert "| -20.22% | deviates | unverified† |" in text
    assert "† unverified: Result not verified by MLCommons Association." in text


def test_a_new_reference_version_needs_the_label_and_lists_the_verdicts_it_flips(repo):
    submit(repo, csv_text("AMD", {"Server": "120000", "Offline": "110000"}), "AMD")
    commit(repo, "AMD v2")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["summary"]["change"] == "maintenance"
    assert [(f["code"], f["file"], f["severity"]) for f in doc["findings"] if f["code"] == "reference-change"] == [
        ("reference-change", "submissions/v9.9/AMD/v2/manifest.yaml", "error")]
    assert doc["summary"]["flips"] == []

    done = gate(repo, "--format", "json", "--allow-maintenance")
    assert done.returncode == 0, done.stdout
    doc = json.loads(done.stdout)
    assert [r["verdict"] for r in doc["rows"]] == ["reference", "reference"]
    assert {(f["code"], f["file"], f["severity"]) for f in doc["findings"]} == {
        ("reference-change", "submissions/v9.9/AMD/v2/manifest.yaml", "warning"),
        ("deviates-from-reference", "submissions/v9.9/Dell/v1/results.csv", "warning"),
        ("verdict-flip", "submissions/v9.9/Dell/v1/results.csv", "warning")}
    assert [f["text"] for f in doc["summary"]["flips"]] == ["Dell v9.9 llama2-70b-99 Server: agree -> deviates"]


# ---- malformed files -------------------------------------------------------------------

@pytest.mark.parametrize("written", ["100\u00a0282", '"103,48"'])
def test_a_malformed_number_fails_with_file_and_line(repo, written):
    text = csv_text("Dell", {"Offline": "108000", "Server": written}, DELL_SYSTEM)
    sealed_version(repo, "Dell", 2, text)
    commit(repo, "Dell v2 written by hand")
    path = "submissions/v9.9/Dell/v2/results.csv"
    done = gate(repo, "--format", "github")
    assert done.returncode == 1
    [error] = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert error.startswith(f"::error file={path},line=3,title=malformed-number::")
    assert "found " + written.strip('"') in error

    doc = json.loads(gate(repo, "--format", "json").stdout)
    assert [(r["line"], r["outcome"]) for r in doc["rows"]] == [(2, "accepted"), (3, "rejected")]


def test_a_file_changed_after_sealing_fails_on_its_hash(repo):
    folder = sealed_version(repo, "Dell", 2, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM))
    (folder / "results.csv").write_text(csv_text("Dell", {"Server": "101001"}, DELL_SYSTEM))
    commit(repo, "Dell v2, edited after sealing")
    doc = json.loads(gate(repo, "--format", "json").stdout)
    assert doc["summary"]["verdict"] == "fail"
    assert {(f["code"], f["file"]) for f in doc["findings"]} == {
        ("hash-mismatch", "submissions/v9.9/Dell/v2/results.csv")}


def test_a_manifest_error_points_at_its_line(repo):
    folder = sealed_version(repo, "Dell", 2, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM))
    manifest = folder / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("version: 2", "version: 7"))
    commit(repo, "Dell v2 whose manifest says 7")
    done = gate(repo, "--format", "github")
    assert done.returncode == 1
    assert ("::error file=submissions/v9.9/Dell/v2/manifest.yaml,line=3,title=manifest-mismatch::"
            in done.stdout)


# ---- versioning rules ------------------------------------------------------------------

def test_an_edited_existing_version_fails_as_immutable(repo):
    path = repo / "submissions" / "v9.9" / "Dell" / "v1" / "results.csv"
    path.write_text(path.read_text().replace("99000", "99500"))
    commit(repo, "edit Dell v1 in place")
    done = gate(repo, "--format", "github")
    assert done.returncode == 1
    [error] = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert error.startswith("::error file=submissions/v9.9/Dell/v1/results.csv,line=2,"
                            "title=version-immutable::versions are immutable: add v2")


def test_a_deleted_file_of_an_existing_version_fails(repo):
    git(repo, "rm", "-q", "submissions/v9.9/Dell/v1/manifest.yaml")
    commit(repo, "drop a manifest")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    [f] = json.loads(done.stdout)["findings"]
    assert (f["code"], f["file"], f["found"]) == (
        "version-immutable", "submissions/v9.9/Dell/v1/manifest.yaml", "deleted since the base")


def test_a_skipped_version_number_fails(repo):
    sealed_version(repo, "Dell", 3, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM))
    commit(repo, "Dell v3 without v2")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    [f] = json.loads(done.stdout)["findings"]
    assert (f["code"], f["file"], f["expected"], f["found"]) == (
        "version-not-next", "submissions/v9.9/Dell/v3/manifest.yaml", "v2", "v3")
    assert "add v2" in f["message"]


def test_a_file_outside_a_version_folder_fails(repo):
    stray = repo / "submissions" / "v9.9" / "Dell" / "latest" / "results.csv"
    stray.parent.mkdir()
    stray.write_text("x\n")
    commit(repo, "stray folder")
    doc = json.loads(gate(repo, "--format", "json").stdout)
    assert [f["code"] for f in doc["findings"]] == ["bad-version-folder"]


# ---- paths, usage and configuration ----------------------------------------------------

def test_named_version_folders_without_git(tmp_path, base_repo):
    plain = tmp_path / "plain"
    shutil.copytree(base_repo / "submissions", plain / "submissions")
    done = mlrepro(plain, "gate", "submissions/v9.9/Dell/v1", "--format", "json",
                   env={"MLREPRO_SCHEMAS": str(base_repo / "schemas")})
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert doc["summary"]["versioning"] == "not checked (no git repository)"
    assert [r["verdict"] for r in doc["rows"]] == ["agree"]


def test_an_unknown_base_is_a_usage_error(repo):
    done = mlrepro(repo, "gate", "--base", "no-such-branch", process=True)
    assert done.returncode == 2
    assert "no-such-branch" in done.stderr


def test_no_git_and_no_paths_is_a_configuration_error(tmp_path):
    (tmp_path / "submissions").mkdir()
    done = mlrepro(tmp_path, "gate", process=True)
    assert done.returncode == 3
    assert "not inside a git repository" in done.stderr


def test_a_path_that_is_not_a_version_folder_is_a_usage_error(repo):
    done = mlrepro(repo, "gate", "submissions/v9.9/Dell")
    assert done.returncode == 2


# ---- renderers -------------------------------------------------------------------------

def test_github_escaping():
    from pipeline.core.escape import gh_data, gh_property

    assert gh_data("100% done\r\nnext") == "100%25 done\\r\\nnext"    # shown, never a new command
    assert gh_property("a:b,c%") == "a%3Ab%2Cc%25"


# ---- speed -----------------------------------------------------------------------------

def test_the_gate_imports_nothing_heavy(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    done = subprocess.run([str(PYTHON), "-X", "importtime", "-c", "from pipeline.cli import main; main()",
                           "gate", "--base", "main"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    for heavy in ("great_expectations", "matplotlib", "dvc", "pipeline.output.report"):
        assert not {m for m in modules if m == heavy or m.startswith(heavy + ".")}, heavy
