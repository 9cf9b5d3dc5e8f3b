"""The CI wiring: .github/workflows/gate.yml and .pre-commit-hooks.yaml.

The workflow's gate steps are run exactly as written (only the base ref is
substituted, as GitHub would) in a temporary git repository with an `origin`."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from test_gate import DELL_SYSTEM, base_repo, commit, csv_text, git, submit  # noqa: F401 (fixture)

WORKFLOW = REPO / ".github" / "workflows" / "gate.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
BASE_REF = "${{ github.base_ref }}"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps() -> list[dict]:
    return workflow()["jobs"]["gate"]["steps"]


def gate_steps() -> list[str]:
    return [s["run"] for s in steps() if "mlrepro gate" in s.get("run", "")]


def test_the_workflow_runs_on_pull_requests_touching_submissions():
    doc = workflow()
    triggers = doc.get("on", doc.get(True))          # YAML 1.1 reads a bare `on` as true
    assert triggers == {"pull_request": {"paths": ["submissions/**"]}}
    uses = {s.get("uses", "").split("@")[0]: s for s in steps()}
    assert uses["actions/checkout"]["with"]["fetch-depth"] == 0
    assert str(uses["actions/setup-python"]["with"]["python-version"]) == "3.11"
    assert any(s.get("run") == "make install" for s in steps())
    runs = gate_steps()
    assert runs[0] == f".venv/bin/mlrepro gate --base origin/{BASE_REF} --format github"
    assert any("--format junit" in r for r in runs)
    assert any("--format markdown" in r and "$GITHUB_STEP_SUMMARY" in r for r in runs)


def test_the_pre_commit_hook():
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert hook["id"] == "mlrepro-gate" and hook["entry"] == "mlrepro gate"
    assert hook["language"] == "python" and hook["files"] == "^submissions/"
    assert hook["pass_filenames"] is False


@pytest.fixture
def checkout(base_repo, tmp_path) -> Path:
    """What actions/checkout leaves: a clone with origin/main, on the PR branch,
    with the project's .venv where `make install` puts it."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(base_repo), str(origin))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "config", "user.name", "Gate Test")
    git(work, "config", "user.email", "gate@example.invalid")
    git(work, "checkout", "-q", "-b", "pr")
    (work / ".venv").symlink_to(REPO / ".venv")
    with open(work / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
        fh.write(".venv\ngate-junit.xml\n")
    return work


def run_step(work: Path, command: str, summary: Path) -> subprocess.CompletedProcess:
    """A `run:` step as the runner does it: bash -e, with GitHub's variables."""
    script = command.replace(BASE_REF, "main")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))}
    env.update(GITHUB_BASE_REF="main", GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTIONS="true")
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)


def test_the_workflow_passes_a_good_pull_request(checkout, tmp_path):
    submit(checkout, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(checkout, "Dell v2")
    summary = tmp_path / "summary.md"
    results = [run_step(checkout, run, summary) for run in gate_steps()]
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
    assert results[0].stdout.strip().endswith("0 error(s)")
    assert summary.read_text(encoding="utf-8").startswith("## ✅ mlrepro gate: passed")
    suite = ET.parse(checkout / "gate-junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) >= 3


def test_the_workflow_fails_a_deviating_pull_request(checkout, tmp_path):
    submit(checkout, csv_text("Dell", {"Server": "90000"}, DELL_SYSTEM), "Dell")
    commit(checkout, "Dell v2, 10% low")
    summary = tmp_path / "summary.md"
    results = [run_step(checkout, run, summary) for run in gate_steps()]
    assert [r.returncode for r in results] == [1, 0, 0]       # the report steps never fail the job
    assert results[0].stdout.startswith(
        "::error file=submissions/v6.0/Dell/v2/results.csv,line=2,title=deviates-from-reference::")
    assert "| v6.0/Dell/v2 | 1 | 0 | 1 | 0 | 0 | 1 |" in summary.read_text(encoding="utf-8")
    suite = ET.parse(checkout / "gate-junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "1"


def test_the_hook_entry_gates_staged_work(checkout):
    """pre-commit runs `mlrepro gate` before the commit exists."""
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    submit(checkout, csv_text("Dell", {"Server": "90000"}, DELL_SYSTEM), "Dell")
    git(checkout, "add", "-A")
    entry = hook["entry"].split()
    done = subprocess.run([str(REPO / ".venv" / "bin" / entry[0]), *entry[1:]], cwd=checkout,
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")})
    assert done.returncode == 1
    assert "base: origin/HEAD (checked)" in done.stdout
    assert "gated: v6.0/Dell/v2" in done.stdout
