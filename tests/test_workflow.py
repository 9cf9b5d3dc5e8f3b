"""The CI wiring: .github/workflows/gate.yml, CODEOWNERS and .pre-commit-hooks.yaml.

The workflow's run-steps are run as the runner would run them, in a
workspace laid out as the checkout steps leave it: base/ is a clone of the
base commit with the tool installed (its .venv: this project's, standing in
for `make install` of the base), pr/ is a full clone of the pull request's
head. Only the `env:` values are evaluated here (as GitHub would); no run:
line may hold a `${{ }}` expression."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from test_gate import DELL_SYSTEM, ROUND, base_repo, csv_text, submit  # noqa: F401 (fixture)
from gitrepo import commit, git

WORKFLOW = REPO / ".github" / "workflows" / "gate.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
CODEOWNERS = REPO / ".github" / "CODEOWNERS"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps() -> list[dict]:
    return workflow()["jobs"]["gate"]["steps"]


def step(name_part: str) -> dict:
    [found] = [s for s in steps() if name_part in s.get("name", "")]
    return found


# ---- the workflow's shape ----------------------------------------------------------------------

def test_the_workflow_runs_on_every_pull_request_as_pull_request_target():
    doc = workflow()
    triggers = doc.get("on", doc.get(True))          # YAML 1.1 reads a bare `on` as true
    assert list(triggers) == ["pull_request_target"]
    assert "paths" not in triggers["pull_request_target"] and "paths-ignore" not in triggers["pull_request_target"]
    assert {"labeled", "unlabeled", "synchronize"} <= set(triggers["pull_request_target"]["types"])
    assert doc["permissions"] == {"contents": "read"}


def test_no_expression_inside_a_run_step():
    for s in steps():
        assert "${{" not in s.get("run", ""), s


def test_the_base_is_installed_and_the_pull_request_is_data_only():
    checkouts = [s for s in steps() if s.get("uses", "").startswith("actions/checkout@")]
    base, pr = checkouts
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}" and base["with"]["path"] == "base"
    assert pr["with"]["ref"] == "${{ github.event.pull_request.head.sha }}" and pr["with"]["path"] == "pr"
    assert pr["with"]["fetch-depth"] == 0
    assert all(c["with"]["persist-credentials"] is False for c in checkouts)
    install = step("Install the tool")
    assert (install["working-directory"], install["run"]) == ("base", "make install")
    assert steps().index(install) < steps().index(pr)    # nothing of the PR exists while installing
    for s in steps():
        if s.get("working-directory") == "pr":
            commands = {line.split()[0] for line in s["run"].splitlines() if line.strip()}
            assert commands <= {"git", "set", "if", '"$MLREPRO"', "--output"}, commands


def test_the_label_alone_allows_a_policy_change():
    env = step("Gate")["env"]
    assert env["ALLOW_POLICY_CHANGE"] == "${{ contains(github.event.pull_request.labels.*.name, 'policy-change') }}"
    assert env["MLREPRO"] == "${{ github.workspace }}/base/.venv/bin/mlrepro"
    assert step("Gate")["run"].count('"$MLREPRO" gate') == 1    # one run writes every format


def test_codeowners_cover_the_policy_paths():
    from pipeline.gate.policy import POLICY

    owned = {line.split()[0].lstrip("/") for line in CODEOWNERS.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")}
    assert set(POLICY) <= owned


def test_the_pre_commit_hook_runs_at_pre_push():
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert hook["id"] == "mlrepro-gate" and hook["entry"] == "mlrepro gate"
    assert hook["stages"] == ["pre-push"] and hook["pass_filenames"] is False and hook["always_run"] is True


# ---- the run-steps, as they run ------------------------------------------------------------------

@pytest.fixture
def workspace(base_repo, tmp_path) -> dict:
    """origin (a bare clone of the base repository); the workspace with base/
    checked out at the base commit and its tool installed; the PR's own clone."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(base_repo), str(origin))
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "clone", "-q", str(origin), "base")
    (ws / "base" / ".venv").symlink_to(REPO / ".venv")          # `make install` of the base
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(origin), str(fork))
    git(fork, "config", "user.name", "Partner")
    git(fork, "config", "user.email", "partner@example.invalid")
    git(fork, "checkout", "-q", "-b", "pr")
    return {"origin": origin, "ws": ws, "fork": fork, "tmp": tmp_path}


def open_pr(w: dict, labels: list[str] = ()) -> dict:
    """What actions/checkout leaves in pr/ (a full clone of the head), and the
    values of the expressions the workflow's env: uses."""
    pr = w["ws"] / "pr"
    if pr.exists():
        shutil.rmtree(pr)
    git(w["ws"], "clone", "-q", str(w["fork"]), "pr")
    head = git(w["fork"], "rev-parse", "HEAD").strip()
    git(pr, "checkout", "-q", "--detach", head)
    git(pr, "remote", "remove", "origin")
    return {"github.event.pull_request.base.repo.clone_url": str(w["origin"]),
            "github.event.pull_request.base.ref": "main",
            "github.workspace": str(w["ws"]),
            "contains(github.event.pull_request.labels.*.name, 'policy-change')":
                "true" if "policy-change" in labels else "false"}


def run_steps(w: dict, values: dict) -> list[subprocess.CompletedProcess]:
    """Every run-step after the install, with bash -e as the runner uses it."""
    summary, temp = w["tmp"] / "summary.md", w["tmp"] / "runner-temp"
    temp.mkdir(exist_ok=True)
    out = []
    for s in steps():
        if "run" not in s or s["run"] == "make install":
            continue
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_", "RUNNER_"))}
        env.update(GITHUB_STEP_SUMMARY=str(summary), RUNNER_TEMP=str(temp), GITHUB_ACTIONS="true")
        env.update({k: EXPR.sub(lambda m: values[m.group(1)], v) for k, v in (s.get("env") or {}).items()})
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s["run"]],
                              cwd=w["ws"] / s.get("working-directory", "."), env=env,
                              capture_output=True, text=True, timeout=180)
        out.append(done)
        if done.returncode:
            break
    return out


def test_a_good_pull_request_passes(workspace):
    submit(workspace["fork"], csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(workspace["fork"], "Dell v2")
    results = run_steps(workspace, open_pr(workspace))
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    assert results[-1].stdout.strip().endswith("0 error(s)")
    tmp = workspace["tmp"]
    assert (tmp / "summary.md").read_text(encoding="utf-8").startswith("## ✅ mlrepro gate: passed")
    suite = ET.parse(tmp / "runner-temp" / "gate-junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) >= 3
    doc = json.loads((tmp / "runner-temp" / "gate.json").read_text(encoding="utf-8"))
    assert doc["summary"]["versions"] == [f"{ROUND}/Dell/v2"] and doc["summary"]["base"] == "gate/base"


def test_a_deviating_pull_request_fails_with_every_report_written(workspace):
    submit(workspace["fork"], csv_text("Dell", {"Server": "90000"}, DELL_SYSTEM), "Dell")
    commit(workspace["fork"], "Dell v2, 10% low")
    results = run_steps(workspace, open_pr(workspace))
    assert [r.returncode for r in results] == [0, 1]
    assert results[-1].stdout.startswith(
        f"::error file=submissions/{ROUND}/Dell/v2/results.csv,line=2,title=deviates-from-reference::")
    assert f"| {ROUND}/Dell/v2 | 1 | 0 | 1 | 0 | 0 | 1 |" in (workspace["tmp"] / "summary.md").read_text()
    suite = ET.parse(workspace["tmp"] / "runner-temp" / "gate-junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "1"


def test_a_policy_only_pull_request_needs_the_label(workspace):
    fork = workspace["fork"]
    params = fork / "params.yaml"
    params.write_text(params.read_text().replace("tolerance_pct: 4.0", "tolerance_pct: 1.0"))
    commit(fork, "tighter tolerance")
    results = run_steps(workspace, open_pr(workspace))
    assert results[-1].returncode == 1
    assert "title=policy-change::policy changed: compare.tolerance_pct: 4.0 -> 1.0" in results[-1].stdout

    results = run_steps(workspace, open_pr(workspace, labels=["policy-change"]))
    assert results[-1].returncode == 0, results[-1].stdout
    doc = json.loads((workspace["tmp"] / "runner-temp" / "gate.json").read_text(encoding="utf-8"))
    assert [f["text"] for f in doc["summary"]["flips"]] == [f"Dell {ROUND} llama2-70b-99 Server: agree -> deviates"]


def test_the_pull_requests_code_never_runs(workspace):
    """A PR that ships a Makefile, a sitecustomize and a `pipeline` package that
    would each leave a marker: the workflow runs none of them."""
    fork, marker = workspace["fork"], workspace["tmp"] / "pwned"
    (fork / "Makefile").write_text(f"install:\n\ttouch {marker}\n")
    (fork / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (fork / "pipeline").mkdir()
    (fork / "pipeline" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (fork / "pipeline" / "gate.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    submit(fork, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(fork, "Dell v2 with friends")
    results = run_steps(workspace, open_pr(workspace))
    assert not marker.exists()
    doc = json.loads((workspace["tmp"] / "runner-temp" / "gate.json").read_text(encoding="utf-8"))
    assert results[-1].returncode == 1
    assert {f["file"] for f in doc["findings"] if f["code"] == "policy-change"} == {
        "pipeline/__init__.py", "pipeline/gate.py"}


def test_the_hook_entry_gates_unpushed_work(workspace):
    """pre-push runs `mlrepro gate` in the partner's clone (origin/HEAD is the base)."""
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    fork = workspace["fork"]
    submit(fork, csv_text("Dell", {"Server": "90000"}, DELL_SYSTEM), "Dell")
    commit(fork, "Dell v2, 10% low")
    entry = hook["entry"].split()
    done = subprocess.run([str(REPO / ".venv" / "bin" / entry[0]), *entry[1:]], cwd=fork,
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))})
    assert done.returncode == 1
    assert "base: origin/HEAD (checked)" in done.stdout
    assert f"gated: {ROUND}/Dell/v2" in done.stdout
