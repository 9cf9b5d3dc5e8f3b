"""The DVC pipeline end to end, in temporary git repositories made of the
project's files (a fresh clone, with the project's .venv beside it as
`make install` would leave it: conftest.project_copy); the first run from
nothing is conftest.made_project, which other test files read too.

- the stages are the mission's steps (ingest, compare, superseded, audit, report): the
  verified and post-deadline sets are outputs of compare and inputs of the
  audit, and every file a stage's command names is a dependency or an output;
- `dvc repro` run as `.venv/bin/dvc repro` with a PATH lacking .venv/bin
  builds every output, leaves `git status` clean (the committed dvc.lock is
  what a fresh run writes), and a second run is a no-op;
- a new version of one partner reruns the ingest stage, which reads that
  partner only (the others come from the per-submitter cache), and what
  depends on the table;
- a new submitter folder is read by the next run with no other edit;
- `dvc exp run -S compare.tolerance_pct=5` runs the stages that use it and no
  other (the sets' results do not change, so the audit does not rerun);
- every file under pipeline/ and schemas/ is a dependency of every stage, and
  a change to any other input or parameter is seen by every stage reading it;
- a run killed mid-way, with dvc.lock left unreadable, is completed by the
  next `make run`, which restores dvc.lock from git and says so, and gives
  the same bytes as the first run (another project at another path).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import BARE_PATH, REPO, invoke, project_copy

BIN = Path(sys.executable).parent
DVC = str(BIN / "dvc")
STAGES = {"ingest", "compare", "superseded", "audit", "report"}
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLREPRO_", "VIRTUAL_ENV"))}
    env.update(PATH=BARE_PATH, DVC_NO_ANALYTICS="1", GIT_CONFIG_NOSYSTEM="1", **extra)
    return env


def _run(args, cwd, check=True):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def make_project(dest: Path) -> Path:
    """The project's files as a new git repository, with the project's .venv
    linked in (what `git clone` + `make install` give: conftest.project_copy)."""
    return project_copy(dest)


def _ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def outputs(project: Path) -> list[str]:
    """Every output of every stage, as dvc.yaml declares it."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        return sorted(out.def_path for stage in repo.index.stages for out in stage.outs)


def output_bytes(project: Path) -> dict[str, bytes]:
    """Every output file's bytes; an output folder (metrics/) by each file in it."""
    out = {}
    for rel in outputs(project):
        path = project / rel
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        out.update({p.relative_to(project).as_posix(): p.read_bytes() for p in files})
    return out


def dvc_status(project: Path) -> dict:
    """What `dvc status --json` prints, from DVC's own API in this process
    (the command is this call and a print; an interpreter's start and DVC's
    imports would be most of each check's time)."""
    from dvc.repo import Repo, lock_repo

    # run where the command runs: DVC names a stage by its path from the working folder
    with contextlib.chdir(project), Repo(str(project)) as repo, lock_repo(repo):
        return repo.status()


def git_status(project: Path) -> str:
    return _run(["git", "status", "--porcelain", "--untracked-files=all"], project).stdout


@pytest.fixture(scope="module")
def built(made_project, tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """A project after one `.venv/bin/dvc repro` with a bare PATH (conftest.made_project,
    the run other files read too; this module changes its own copy), and the
    bytes of every output of that first run."""
    first = (made_project.parent / "first-run.txt").read_text(encoding="utf-8")
    assert _ran(first) == STAGES, first
    assert "submitters_read=42, submitters_cached=0" in first
    project = tmp_path_factory.mktemp("first") / "project"
    shutil.copytree(made_project, project, symlinks=True)
    return project, output_bytes(project)


def test_every_stage_depends_on_the_whole_code_and_rules_folders():
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert stages
    for name, stage in stages.items():
        deps = (stage.get("do") or stage)["deps"]
        assert {"pipeline", "schemas", "bin/mlrepro"} <= set(deps), name
        assert (stage.get("do") or stage)["cmd"].startswith("bin/mlrepro "), name


def _stages(project: Path) -> dict[str, dict]:
    """Each stage's dependencies, outputs (metrics included) and parameters, as DVC sees them."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        return {stage.name: {"deps": {d.def_path for d in stage.deps if not hasattr(d, "params")},
                             "params": {k for d in stage.deps if hasattr(d, "params") for k in d.params},
                             "outs": {o.def_path for o in stage.outs}, "cmd": stage.cmd}
                for stage in repo.index.stages}


def test_the_stages_are_the_missions_steps_and_the_sets_feed_the_audit():
    stages = _stages(REPO)
    assert set(stages) == STAGES
    sets = {f"results/{s}/{name}.csv" for s in ("verified", "post_deadline") for name in ("results", "agreement")}
    assert sets <= stages["compare"]["outs"]
    assert {"results/verified/results.csv", "results/post_deadline/results.csv"} <= stages["audit"]["deps"]
    assert stages["audit"]["outs"] == {"audit/validation.json"}
    assert "data/results.parquet" in stages["ingest"]["outs"] & stages["compare"]["deps"]
    assert {"data/agreement.csv", "audit/validation.json"} <= stages["report"]["deps"]
    assert stages["compare"]["params"] == {"compare.tolerance_pct", "compare.reference_submitter",
                                           "compare.reference_vendor"}
    assert stages["report"]["params"] == {"compare.reference_submitter", "compare.reference_vendor",
                                          "compare.tolerance_pct"}
    assert not stages["ingest"]["params"] and not stages["audit"]["params"]


def test_every_path_a_stage_command_names_is_a_dependency_or_an_output(built):
    """A path on a stage's command line that exists after a run is read (a
    dependency) or written (an output, or the folder of one); the ingest
    cache is neither (its entries are keyed by what they are computed from)."""
    project, _ = built
    for name, stage in _stages(project).items():
        for token in stage["cmd"].split()[1:]:
            if token.startswith("-") or not (project / token).exists() or token == ".cache/ingest":
                continue
            read = any(token == d or token.startswith(d.rstrip("/") + "/") for d in stage["deps"])
            written = any(o == token or o.startswith(token.rstrip("/") + "/") for o in stage["outs"])
            assert read or written, f"stage {name}: {token} is neither a dependency nor an output"


def test_a_fresh_run_builds_everything_leaves_git_clean_and_a_second_is_a_noop(built):
    project, first = built
    for out in ("data/results.parquet", "data/agreement.csv", "results/verified/results.csv",
                "results/post_deadline/results.csv", "metrics.json", "audit/claims.json",
                "audit/scaling.json", "audit/validation.json", "reports/index.html",
                "audit/crosscheck/v5.1.json", "audit/crosscheck/v6.0.json", "audit/crosscheck/v6.1.json"):
        assert out in first, out
    assert not (project / "audit" / "data_docs").exists()
    for round_ in ("v5.1", "v6.0", "v6.1"):   # every shipped verified result is the published one
        summary = json.loads((project / f"audit/crosscheck/{round_}.json").read_text())["summary"]
        assert summary["checked"] > 0 and summary["differs"] == summary["not-published"] == 0, summary
    verified = pd.read_csv(project / "results/verified/results.csv")
    post = pd.read_csv(project / "results/post_deadline/results.csv")
    assert set(verified["status"]) == {"verified"}
    assert set(post["status"]) == {"post-deadline"}
    assert set(post["label"]) == {"unverified"}
    assert set(post["footnote"]) == {"Result not verified by MLCommons Association."}
    assert not set(verified["source"]) & set(post["source"])
    # the committed dvc.lock, .gitignore files and metrics.json are what a fresh run writes
    assert git_status(project) == "", "regenerate and commit dvc.lock (make run) after changing code"

    second = _run([DVC, "repro"], project)
    assert _ran(second.stdout) == set()
    assert "Data and pipelines are up to date" in second.stdout


def test_a_changed_dependency_file_is_seen_by_every_stage(built):
    """Each file under pipeline/ and schemas/ lies inside a dependency of
    every stage (DVC's own view of the stages), and an edit to one file of
    each subfolder makes `dvc status` name every stage."""
    from dvc.repo import Repo

    project, _ = built
    files = [p for p in sorted((project / "pipeline").rglob("*")) + sorted((project / "schemas").rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    with Repo(str(project)) as repo:
        deps = {stage.name: [Path(d.fs_path) for d in stage.deps] for stage in repo.index.stages}
    assert set(deps) == STAGES
    for stage, paths in deps.items():
        uncovered = [f.relative_to(project).as_posix() for f in files
                     if not any(f == d or d in f.parents for d in paths)]
        assert uncovered == [], f"{stage} does not depend on {uncovered}"

    one_per_folder = {}
    for f in files:
        one_per_folder.setdefault(f.parent, f)
    for path in one_per_folder.values():
        saved = path.read_bytes()
        try:
            path.write_bytes(saved + (b"\n" if path.suffix != ".json" else b" "))
            status = dvc_status(project)
        finally:
            path.write_bytes(saved)
        assert set(status) == STAGES, f"{path.relative_to(project)}: dvc status names {sorted(status)}"
    assert dvc_status(project) == {}


def test_a_changed_input_or_parameter_is_seen_by_every_stage_that_reads_it(built):
    """Each input that is no stage's output (claims.yaml, a published table,
    the submissions) and each parameter key: `dvc status` names exactly the
    stages that list it."""
    project, _ = built
    stages = _stages(project)
    produced = {o for s in stages.values() for o in s["outs"]}
    inputs = sorted({d for s in stages.values() for d in s["deps"]} - produced - {"pipeline", "schemas", "bin/mlrepro"})
    assert {"submissions", "claims.yaml", "published/v5.1/summary_results.json"} <= set(inputs)
    for dep in inputs:
        path = project / dep
        target = next(p for p in sorted(path.rglob("*")) if p.is_file()) if path.is_dir() else path
        saved = target.read_bytes()
        try:
            target.write_bytes(saved + (b" " if target.suffix == ".json" else b"\n"))
            status = dvc_status(project)
        finally:
            target.write_bytes(saved)
        assert set(status) == {n for n, s in stages.items() if dep in s["deps"]}, (dep, sorted(status))
    params = project / "params.yaml"
    saved = params.read_text()
    for key, value in (("tolerance_pct", "4.0"), ("reference_vendor", "AMD")):
        try:
            params.write_text(saved.replace(f"{key}: {value}", f"{key}: 7" if key == "tolerance_pct" else f"{key}: X"))
            status = dvc_status(project)
        finally:
            params.write_text(saved)
        assert set(status) == {n for n, s in stages.items() if f"compare.{key}" in s["params"]}, (key, status)
    assert dvc_status(project) == {}


def test_one_new_version_rereads_one_partner_and_a_new_submitter_needs_no_edit(built):
    """Vultr sends v2 and Lenovo, never seen before, its first submission:
    the next run reads those two submitters only (the other 41 from the cache) and
    reruns what depends on the table; nothing else is edited."""
    project, _ = built
    source = project / "submissions/v5.1/Vultr/v1/results.csv"
    changed = project.parent / "vultr-v2.csv"
    changed.write_text(source.read_text().replace("30339.4", "31339.4"))
    newcomer = project.parent / "lenovo.csv"
    rows = source.read_text().splitlines()
    newcomer.write_text("\n".join([rows[0]] + [r.replace("Vultr,", "Lenovo,", 1) for r in rows[1:]]) + "\n")
    for path, submitter in ((changed, "Vultr"), (newcomer, "Lenovo")):     # in this process (conftest.invoke)
        done = invoke(project, "submit", path, "--submitter", submitter, "--round", "v5.1",
                      "--status", "verified", "--submitted-at", "2025-07-31T10:00:00+00:00", "--force")
        assert done.returncode == 0, done.stdout + done.stderr
    # ingest counts a version from when the visibility record saw it on main (pipeline/store/clock.py):
    # merged in time, as the regenerate workflow's record job appends it
    with open(project / "record/visible.yaml", "a", encoding="utf-8") as record:
        record.write("  'v5.1/Lenovo/v1': '2025-07-31T12:00:00Z'\n  'v5.1/Vultr/v2': '2025-07-31T12:00:00Z'\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    _run([*git, "add", "-A"], project)
    _run([*git, "commit", "-qm", "Vultr v2 and Lenovo v1, merged before the deadline"], project)
    third = _run([DVC, "repro"], project)
    ran = _ran(third.stdout)
    assert ran == STAGES
    assert "submitters_read=2, submitters_cached=41" in third.stdout
    agreement = pd.read_csv(project / "data/agreement.csv")
    vultr_server = agreement[(agreement["submitter"] == "Vultr") & (agreement["scenario"] == "Server")]
    assert set(vultr_server["verdict"]) == {"agree"}
    assert all(vultr_server["source"].str.startswith("v5.1/Vultr/v2/"))
    # ... and the crosscheck says the new verified value is not the published one
    doc = json.loads((project / "audit/crosscheck/v5.1.json").read_text())
    differs = {(r["submitter"], r["model"], r["value"], r["published_value"])
               for r in doc["rows"] if r["verdict"] == "differs"}
    assert differs == {("Vultr", model, 31339.4, 30339.4) for model in ("llama2-70b-99", "llama2-70b-99.9")}
    table = pd.read_parquet(project / "data/results.parquet")
    lenovo = table[(table["submitter"] == "Lenovo") & (table["round"] == "v5.1")]
    assert len(lenovo) == len(rows) - 1
    assert dvc_status(project) == {}


def test_an_experiment_with_another_tolerance_runs(built):
    project, _ = built
    _run([DVC, "repro"], project)
    exp = _run([DVC, "exp", "run", "-S", "compare.tolerance_pct=5"], project)
    assert _ran(exp.stdout) == {"compare", "superseded", "report"}
    assert json.loads((project / "data/agreement_summary.json").read_text())["tolerance_pct"] == 5
    assert "Experiment results" in exp.stdout or "Ran experiment" in exp.stdout, exp.stdout


def test_a_killed_run_is_completed_by_the_next_make_run_with_the_bytes_of_an_uninterrupted_one(built, tmp_path):
    """Another project, at another path, from nothing: a run killed while a
    stage runs, dvc.lock left cut short: `make run` restores dvc.lock from
    git, says so, and finishes with every output (dvc.yaml's outs and
    metrics) byte for byte the first project's: two runs from scratch, at two
    paths, one of them interrupted, give the same bytes."""
    _, first = built
    project = make_project(tmp_path / "elsewhere")
    for rel in outputs(project):   # the committed ones too (dvc.lock's outputs): nothing to start from
        path = project / rel
        if path.exists():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    proc = subprocess.Popen([DVC, "repro"], cwd=project, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    deadline = time.monotonic() + 600
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("Running stage 'audit'") or time.monotonic() > deadline:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert any(line.startswith("Running stage 'audit'") for line in seen), "".join(seen)
    lock = project / "dvc.lock"
    text = lock.read_text()
    lock.write_text(text[:text.index("    deps:\n") + len("    deps:\n    - ")])   # a write cut short
    refused = _run([DVC, "status"], project, check=False)
    assert refused.returncode != 0 and "dvc.lock" in refused.stderr   # DVC alone stops here

    done = _run(["make", "-o", "install", "run"], project)
    assert "restored it from git" in done.stderr
    second = output_bytes(project)
    assert sorted(second) == sorted(first)
    differ = [name for name in first if first[name] != second[name]]
    assert differ == [], f"outputs whose bytes differ between two runs: {differ}"
    assert git_status(project) == ""
