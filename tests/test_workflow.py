"""The CI wiring: .github/workflows/gate.yml and regenerate.yml, CODEOWNERS
and .pre-commit-hooks.yaml.

The gate workflow's run-steps are run as the runner would run them, in a
workspace laid out as the checkout steps leave it: base/ is a clone of the
base commit with the tool installed (its .venv: this project's, standing in
for `make install` of the base), pr/ is a full clone of the pull request's
head. The regenerate workflow's run-steps run in a clone of a copy of this
project after a maintainer's push, with `make run` as written. Only the
`env:` values are evaluated here (as GitHub would); no run: line may hold a
`${{ }}` expression."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from conftest import REPO, invoke
from test_gate import DELL_SYSTEM, ROUND, base_repo, csv_text, submit  # noqa: F401 (fixture)
from gitrepo import commit, git

from pipeline.gate import scope
from pipeline.store import clock

WORKFLOW = REPO / ".github" / "workflows" / "gate.yml"
REGENERATE = REPO / ".github" / "workflows" / "regenerate.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
CODEOWNERS = REPO / ".github" / "CODEOWNERS"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def workflow(path: Path = WORKFLOW) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(doc: dict) -> dict:
    return doc.get("on", doc.get(True))          # YAML 1.1 reads a bare `on` as true


def steps(path: Path = WORKFLOW, job: str | None = None) -> list[dict]:
    """The steps of the workflow's one job (or of JOB; of every job, in order, when the workflow has several)."""
    found = workflow(path)["jobs"]
    return found[job]["steps"] if job else [s for j in found.values() for s in j["steps"]]


def step(name_part: str) -> dict:
    [found] = [s for s in steps() if name_part in s.get("name", "")]
    return found


# ---- the workflow's shape ----------------------------------------------------------------------

def test_the_workflow_runs_on_every_pull_request_as_pull_request_target():
    doc = workflow()
    on = triggers(doc)
    assert list(on) == ["pull_request_target"]
    assert "paths" not in on["pull_request_target"] and "paths-ignore" not in on["pull_request_target"]
    assert {"labeled", "unlabeled", "synchronize"} <= set(on["pull_request_target"]["types"])
    assert doc["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("path", [WORKFLOW, REGENERATE])
def test_no_expression_inside_a_run_step(path):
    for s in steps(path):
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


def test_the_maintainers_label_alone_allows_a_maintenance_change():
    env = step("Gate")["env"]
    assert env["ALLOW_MAINTENANCE"] == "${{ contains(github.event.pull_request.labels.*.name, 'maintenance') }}"
    assert f"'{scope.LABEL}'" in env["ALLOW_MAINTENANCE"]       # the label the gate's findings name
    assert '--allow-maintenance' in step("Gate")["run"]
    assert env["MLREPRO"] == "${{ github.workspace }}/base/.venv/bin/mlrepro"
    assert step("Gate")["run"].count('"$MLREPRO" gate') == 1    # one run writes every format


def owner(rules: list[tuple[re.Pattern, list[str]]], path: str) -> list[str]:
    """CODEOWNERS: the owners of the last pattern that matches PATH."""
    found: list[str] = []
    for pattern, owners in rules:
        if pattern.fullmatch(path):
            found = owners
    return found


def codeowners() -> list[tuple[re.Pattern, list[str]]]:
    rules = []
    for line in CODEOWNERS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pattern, *owners = line.split()
        if pattern == "*":
            regex = ".*"
        else:           # anchored with a leading slash; * stays within one folder; a trailing / covers all below
            body = re.escape(pattern.strip("/")).replace(r"\*", "[^/]*")
            regex = body + ("/.*" if pattern.endswith("/") else "(/.*)?")
        rules.append((re.compile(regex), owners))
    return rules


def test_codeowners_give_each_partner_its_folders_and_everything_else_to_the_maintainers():
    rules = codeowners()
    maintainers = ["@mlrepro/maintainers"]
    submitters = {p.name for p in (REPO / "submissions").glob("*/*") if p.is_dir()}
    reference = yaml.safe_load((REPO / "params.yaml").read_text())["compare"]["reference_submitter"]
    assert reference in submitters
    for name in sorted(submitters):
        path = f"submissions/v6.0/{name}/v9/results.csv"
        if name == reference:
            assert owner(rules, path) == maintainers, name
        else:
            assert owner(rules, path) == [f"@mlrepro/partner-{name.lower().replace('_', '-')}", *maintainers], name
    for path in ("Makefile", "bin/mlrepro", ".dvc/config", "claims.yaml", ".ci/run", "tests/test_gate.py",
                 "metrics/verified.json", ".gitattributes", "params.yaml", "schemas/rounds.yaml",
                 "published/v6.0/summary.csv", ".github/workflows/gate.yml", "submissions/README.md",
                 "submissions/v6.0/notes.txt", "pipeline/gate/judge.py"):
        assert owner(rules, path) == maintainers, path


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
            "contains(github.event.pull_request.labels.*.name, 'maintenance')":
                "true" if "maintenance" in labels else "false"}


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
    assert f"| `{ROUND}/Dell/v2` | 1 | 0 | 1 | 0 | 0 | 1 |" in (workspace["tmp"] / "summary.md").read_text()
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

    results = run_steps(workspace, open_pr(workspace, labels=["maintenance"]))
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
    assert results[-1].returncode == 1 and doc["summary"]["change"] == "mixed"
    assert {f["file"] for f in doc["findings"] if f["code"] == "maintenance-change"} == {
        "Makefile", "sitecustomize.py", "pipeline/__init__.py", "pipeline/gate.py"}


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


# ---- the outputs on main, and a partner's local `make run` ----------------------------------------

REGENERATOR = "mlrepro-regenerate"


# what run_env() sets that git reads, for a command run in this process
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1"}


def run_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_", "RUNNER_", "VIRTUAL_ENV"))}
    env.update(DVC_NO_ANALYTICS="1", GIT_CONFIG_NOSYSTEM="1")
    return env


def installed(clone: Path) -> Path:
    """What `make install` leaves in a clone: a .venv (this project's, linked
    part by part) whose .installed marker is newer than the clone's
    pyproject.toml, so that make installs nothing."""
    venv = clone / ".venv"
    venv.mkdir()
    for part in (REPO / ".venv").iterdir():
        if not part.name.startswith("."):
            (venv / part.name).symlink_to(part)
    (venv / ".installed").touch()
    return clone


def clone_of(origin: Path, dest: Path, who: str, *options: str) -> Path:
    git(dest.parent, "clone", "-q", *options, str(origin), str(dest))
    git(dest, "config", "user.name", who)
    git(dest, "config", "user.email", f"{who.lower()}@example.invalid")
    return installed(dest)


def make_run(clone: Path) -> None:
    done = subprocess.run(["make", "run"], cwd=clone, env=run_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def changed_paths(repo: Path, old: str, new: str) -> set[str]:
    return set(filter(None, git(repo, "diff", "--name-only", old, new).split("\n")))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict:
    """A copy of this project on `main` in a bare origin, after a maintainer's
    push that opened round v9.9 (deadline ahead) and added AMD's reference
    for it, its outputs not regenerated yet."""
    from test_gate import AMD, FUTURE_ROUND

    tmp = tmp_path_factory.mktemp("project")
    seed = tmp / "seed"
    for rel in filter(None, git(REPO, "ls-files", "-z").split("\0")):
        if (REPO / rel).is_file():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, seed / rel)
    git(tmp, "init", "-q", "-b", "main", str(seed))
    git(seed, "config", "user.name", "Maintainer")
    git(seed, "config", "user.email", "maintainer@example.invalid")
    commit(seed, "the project")
    rounds = seed / "schemas" / "rounds.yaml"
    rounds.write_text(rounds.read_text(encoding="utf-8") + FUTURE_ROUND, encoding="utf-8")
    submit(seed, csv_text("AMD", AMD), "AMD")
    commit(seed, "open round v9.9 with AMD's reference")
    origin = tmp / "origin.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(origin))
    return {"origin": origin, "tmp": tmp, "pushed": git(seed, "rev-parse", "HEAD").strip()}


def jobs(path: Path = REGENERATE) -> dict:
    return workflow(path)["jobs"]


RUNS_CODE = {"make", "pip", "pip3", "python", "python3", "pytest", "dvc", "mlrepro", "bin/mlrepro", ".venv",
             "bash", "source", "eval", "exec"}


def test_the_regenerate_workflow_splits_the_untrusted_run_from_the_write_token():
    """Push to main; no permission at the top; the jobs that check out or run
    the pushed tree read only, with no credentials kept; the write job runs no
    make, pip, python or file of the pushed tree."""
    doc = workflow(REGENERATE)
    assert triggers(doc) == {"push": {"branches": ["main"]}}
    assert doc["permissions"] == {} and doc["concurrency"]["cancel-in-progress"] is True
    record, regen, write = (jobs()[name] for name in ("record", "regenerate", "commit"))
    assert record["if"] == f"github.event.head_commit.author.name != '{REGENERATOR}'"
    assert (regen["needs"], write["needs"]) == ("record", ["record", "regenerate"])
    assert record["permissions"] == regen["permissions"] == {"contents": "read"}
    assert write["permissions"] == {"contents": "write"}
    for job in (record, regen, write):
        [checkout] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert checkout["with"]["ref"] == "${{ github.sha }}" and job["steps"].index(checkout) == 0
        if job is not write:                       # the write job needs its token to push
            assert checkout["with"]["persist-credentials"] is False
    assert [s["run"] for s in regen["steps"] if s.get("run", "").startswith("make ")] == ["make install", "make run"]
    for job in (record, write):
        assert {s["uses"].split("@")[0] for s in job["steps"] if "uses" in s} <= {
            "actions/checkout", "actions/upload-artifact", "actions/download-artifact"}
        for s in (s for s in job["steps"] if "run" in s):
            words = set(re.findall(r"[\w./$-]+", s["run"]))
            assert not words & RUNS_CODE, (s["name"], words & RUNS_CODE)
    commit_step = step_of(REGENERATE, "Commit", "commit")
    assert commit_step["env"]["BEFORE"] == "${{ github.event.before }}"
    assert 'git show "$BEFORE:bin/tracked-outputs"' in commit_step["run"]     # main's, before this push
    assert 'sh "$RUNNER_TEMP/tracked-outputs"' in commit_step["run"]          # no file of the pushed tree
    assert f"user.name={REGENERATOR}" in commit_step["run"]
    uploads = [s for s in regen["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [u["with"]["path"] for u in uploads] == ["${{ steps.outputs.outputs.paths }}"]


def tracked_outputs(dvc_yaml: Path) -> list[str]:
    done = subprocess.run(["sh", str(REPO / "bin" / "tracked-outputs"), str(dvc_yaml)], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def test_the_paths_the_write_job_commits_are_the_outputs_of_dvc_yaml_that_git_tracks(tmp_path):
    """bin/tracked-outputs (sh and awk) equals a YAML parse of dvc.yaml
    (the gate's), left to the paths git tracks; and it follows dvc.yaml: an
    output marked cache: false is listed, a cached one is not."""
    generated = scope.generated((REPO / "dvc.yaml").read_bytes())
    tracked = [p for p in generated if git(REPO, "ls-files", "--", p).strip()]
    assert tracked_outputs(REPO / "dvc.yaml") == sorted(tracked) == ["dvc.lock", "metrics", "metrics.json"]
    changed = tmp_path / "dvc.yaml"
    changed.write_text((REPO / "dvc.yaml").read_text(encoding="utf-8").replace(
        "      - reports/deviation.csv\n", "      - reports/deviation.csv:\n          cache: false\n"), encoding="utf-8")
    assert tracked_outputs(changed) == ["dvc.lock", "metrics", "metrics.json", "reports/deviation.csv"]


def step_of(path: Path, name_part: str, job: str | None = None) -> dict:
    [found] = [s for s in steps(path, job) if name_part in s.get("name", "")]
    return found


def _output_values(path: Path) -> dict[str, str]:
    """What a step wrote to $GITHUB_OUTPUT (name=value, or name<<DELIMITER ... DELIMITER)."""
    values, lines = {}, path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    while lines:
        line = lines.pop(0)
        if "<<" in line:
            name, end = line.split("<<", 1)
            body = []
            while lines[0] != end:
                body.append(lines.pop(0))
            lines.pop(0)
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def _upload(ws: Path, paths: list[str], artifact: Path) -> None:
    """actions/upload-artifact: each path kept relative to their least common ancestor."""
    full = [ws / p for p in paths]
    root = Path(os.path.commonpath([p if p.is_dir() else p.parent for p in full]))
    for p in full:
        for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())):
            (artifact / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, artifact / f.relative_to(root))


def run_job(name: str, w: dict, pushed: str, before: str, check: bool = True) -> list[subprocess.CompletedProcess]:
    """One job of the regenerate workflow as the runner runs it: a fresh
    checkout of the pushed commit, its run-steps with bash -e (`make install`
    stands in by the project's .venv), artifacts kept in w["artifacts"]."""
    ws, temp = w["tmp"] / f"{name}-{pushed[:7]}", w["tmp"] / f"{name}-{pushed[:7]}-temp"
    if ws.exists():
        shutil.rmtree(ws)
        shutil.rmtree(temp)
    temp.mkdir(parents=True)
    clone_of(w["origin"], ws, "runner")
    if name != "regenerate":               # only that job installs the project (make install)
        shutil.rmtree(ws / ".venv")
    git(ws, "checkout", "-q", "--detach", pushed)
    values = {"github.sha": pushed, "github.ref_name": "main", "github.event.before": before,
              "runner.temp": str(temp), **w.setdefault("needs", {})}
    out = []
    for i, s in enumerate(jobs()[name]["steps"]):
        uses, given = s.get("uses", ""), {k: EXPR.sub(lambda m: values[m.group(1)], str(v))
                                         for k, v in (s.get("with") or {}).items()}
        if uses.startswith("actions/upload-artifact@"):
            _upload(ws, [p for p in given["path"].splitlines() if p.strip()], w["artifacts"] / given["name"])
        elif uses.startswith("actions/download-artifact@"):
            dest = Path(given["path"]) if Path(given["path"]).is_absolute() else ws / given["path"]
            shutil.copytree(w["artifacts"] / given["name"], dest, dirs_exist_ok=True)
        elif "run" in s and s["run"] != "make install":
            env = run_env()
            env.update(RUNNER_TEMP=str(temp), GITHUB_WORKSPACE=str(ws), GITHUB_OUTPUT=str(temp / f"output-{i}"))
            env.update({k: EXPR.sub(lambda m: values[m.group(1)], v) for k, v in (s.get("env") or {}).items()})
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s["run"]], cwd=ws,
                                  env=env, capture_output=True, text=True, timeout=600)
            out.append(done)
            if done.returncode:
                assert not check, done.stdout[-2000:] + done.stderr[-2000:]
                return out
            values.update({f"steps.{s['id']}.outputs.{k}": v
                           for k, v in _output_values(temp / f"output-{i}").items()} if "id" in s else {})
    w["needs"].update({f"needs.{name}.outputs.{k}": EXPR.sub(lambda m: values[m.group(1)], v)
                       for k, v in (jobs()[name].get("outputs") or {}).items()})
    return out


def regenerate(w: dict, pushed: str, before: str) -> list[subprocess.CompletedProcess]:
    """The whole workflow on one push: record, regenerate, commit."""
    if w["artifacts"].exists():
        shutil.rmtree(w["artifacts"])
    run_job("record", w, pushed, before)
    run_job("regenerate", w, pushed, before)
    return run_job("commit", w, pushed, before)


@pytest.fixture(scope="module")
def regenerated(project) -> dict:
    """The regenerate workflow run on the maintainer's push."""
    w = {**project, "artifacts": project["tmp"] / "artifacts"}
    before = git(project["origin"], "rev-parse", "main~1").strip()
    started = datetime.now(timezone.utc).replace(microsecond=0)
    results = regenerate(w, project["pushed"], before)
    return {**w, "results": results, "started": started, "before": before,
            "main": git(project["origin"], "rev-parse", "main").strip()}


@pytest.fixture(scope="module")
def rerun(regenerated) -> dict:
    """The record and regenerate jobs once more, on the commit the first run
    pushed (main now), as a push of it would run them; their artifacts are
    kept aside, and each commit job below takes its own copy (a test tampers
    with its copy only). The regenerate job's workspace is kept too: a fresh
    checkout of main after `make run`."""
    w, main = regenerated, regenerated["main"]
    if w["artifacts"].exists():
        shutil.rmtree(w["artifacts"])
    run_job("record", w, main, w["pushed"])
    run_job("regenerate", w, main, w["pushed"])
    kept = w["tmp"] / "artifacts-of-main"
    shutil.copytree(w["artifacts"], kept)
    return {"artifacts": kept, "needs": dict(w["needs"]), "workspace": w["tmp"] / f"regenerate-{main[:7]}"}


def commit_job(w: dict, rerun: dict, tamper=None) -> list[subprocess.CompletedProcess]:
    """The commit job of that run on main, given a fresh copy of its
    artifacts (changed by TAMPER first, when given)."""
    if w["artifacts"].exists():
        shutil.rmtree(w["artifacts"])
    shutil.copytree(rerun["artifacts"], w["artifacts"])
    w["needs"] = dict(rerun["needs"])
    if tamper:
        tamper(w["artifacts"])
    return run_job("commit", w, w["main"], w["pushed"], check=tamper is None)


def test_the_regenerate_workflow_commits_only_the_outputs_dvc_yaml_declares(regenerated, rerun):
    origin, pushed, main = regenerated["origin"], regenerated["pushed"], regenerated["main"]
    assert main != pushed and git(origin, "rev-parse", f"{main}^").strip() == pushed
    assert git(origin, "log", "-1", "--format=%an %s", main).strip() == \
        f"{REGENERATOR} Regenerate the pipeline's outputs for {pushed}"
    outputs = tracked_outputs(REPO / "dvc.yaml") + [clock.RECORD]
    changed = changed_paths(origin, pushed, main)
    assert {"dvc.lock", "metrics.json", clock.RECORD} <= changed and any(p.startswith("metrics/v9.9/") for p in changed)
    assert all(any(p == o or p.startswith(o + "/") for o in outputs) for p in changed), changed
    # the record gained the one new version, at the workflow's own time (not its commit's, not its manifest's)
    record = clock.read_record(git(origin, "show", f"{main}:{clock.RECORD}").encode("utf-8"))
    old = clock.read_record(git(origin, "show", f"{pushed}:{clock.RECORD}").encode("utf-8"))
    assert set(record) - set(old) == {"v9.9/AMD/v1"} and all(record[k] == old[k] for k in old)
    assert regenerated["started"] <= record["v9.9/AMD/v1"] <= datetime.now(timezone.utc)
    # main as the job left it: `make run` in a fresh checkout of it (the regenerate job's, on a push
    # of main) changes no file git tracks and adds none
    assert git(rerun["workspace"], "status", "--porcelain", "--untracked-files=all") == ""
    # the job's own commit: nothing is left to regenerate (and its `if:` skips it anyway)
    again = commit_job(regenerated, rerun)
    assert again[-1].stdout.strip().endswith("the outputs are current")
    assert git(origin, "rev-parse", "main").strip() == main


def _forged_record(a: Path) -> None:
    path = a / "visible.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "  'v9.9/Dell/v7': '2026-01-02T00:00:00Z'\n",
                    encoding="utf-8")


@pytest.mark.parametrize("artifact, tamper, message", [
    ("outputs", lambda a: (a / "Makefile").write_text("all:\n"),
     "the artifact holds Makefile, which is no output git tracks"),
    ("outputs", lambda a: (a / ".github" / "workflows").mkdir(parents=True) or (a / ".github/workflows/x.yml")
     .write_text("x"), "the artifact holds .github/workflows/x.yml"),
    ("outputs", lambda a: (a / "dvc.lock").unlink(), "the artifact lacks dvc.lock"),
    ("record", _forged_record, "the record artifact is not the one the record job wrote"),
])
def test_the_write_job_refuses_an_artifact_that_holds_anything_else(regenerated, rerun, artifact, tamper, message):
    """Whatever the job that ran the project's code uploads, the write job
    commits only the tracked outputs: anything else fails it, and main stays.
    (The untampered artifacts of the same run are current: the test above.)"""
    done = commit_job(regenerated, rerun, lambda artifacts: tamper(artifacts / artifact))
    assert done[-1].returncode == 1 and f"::error title=regenerate::{message}" in done[-1].stdout
    assert git(regenerated["origin"], "rev-parse", "main").strip() == regenerated["main"]


def test_after_a_local_make_run_a_good_submission_passes_the_hook_and_the_gate(regenerated):
    """A partner clones main, seals a version, commits it and runs `make run`:
    the regenerated dvc.lock and metrics stay uncommitted, and the pre-push
    hook, the gate and --worktree all pass; so does CI's run in a fresh clone,
    with or without core.autocrlf."""
    tmp = regenerated["tmp"]
    fork = clone_of(regenerated["origin"], tmp / "partner", "Partner")
    git(fork, "checkout", "-q", "-b", "dell-v1")
    submit(fork, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(fork, "Dell v1")
    make_run(fork)
    dirty = {line[3:] for line in git(fork, "status", "--porcelain", "--untracked-files=all").splitlines()}
    assert "dvc.lock" in dirty and "metrics.json" in dirty
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    mlrepro = str(fork / ".venv" / "bin" / "mlrepro")
    verdicts = []
    # the hook's entry as pre-push runs it (the console script); the other gates in this process
    # (conftest.invoke: the same command without an interpreter's start)
    for args in (hook["entry"].split()[1:], ["gate", "--worktree"], ["gate", "--format", "json"]):
        done = (subprocess.run([mlrepro, *args], cwd=fork, env=run_env(), capture_output=True, text=True,
                               timeout=300) if not verdicts else invoke(fork, *args, env=GIT_ENV))
        assert done.returncode == 0, done.stdout + done.stderr
        verdicts.append(done.stdout)
    assert "gated: v9.9/Dell/v1" in verdicts[0] and "base: origin/HEAD (checked)" in verdicts[0]
    local = json.loads(verdicts[-1])
    assert [r["verdict"] for r in local["rows"]] == ["agree"] and local["summary"]["change"] == "submission"
    for name, options in (("ci", ()), ("ci-autocrlf", ("--config", "core.autocrlf=true"))):
        clone = tmp / name
        git(tmp, "clone", "-q", *options, str(fork), str(clone))
        git(clone, "checkout", "-q", "dell-v1")
        git(clone, "fetch", "-q", str(regenerated["origin"]), "+refs/heads/main:refs/remotes/gate/base")
        done = invoke(clone, "gate", "--base", "gate/base", "--format", "json", env=GIT_ENV)
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["rows"] == local["rows"]
