"""The DVC pipeline end to end, in a temporary git repository: `dvc repro`
builds every output from the shipped submissions, a second run is a no-op,
and a new version of one partner's submission reruns only what depends on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(args, cwd, check=True):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A clean clone-like copy of the tracked project files, as its own git repo."""
    dest = tmp_path_factory.mktemp("project")
    tracked = _run(["git", "ls-files", "-z"], REPO).stdout.split("\0")
    for rel in filter(None, tracked):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    _run(["git", "init", "-q"], dest)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A"], dest)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "base"], dest)
    return dest


def _ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def test_every_submission_folder_has_an_ingest_stage():
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    listed = {(v["round"], v["submitter"]) for v in params["submissions"].values()}
    on_disk = {(p.parent.name, p.name) for p in (REPO / "submissions").glob("*/*") if p.is_dir()}
    assert listed == on_disk


def test_repro_builds_outputs_then_is_a_noop_then_reruns_only_what_changed(project):
    first = _run(["dvc", "repro"], project)
    assert "ingest@v5.1-Dell" in _ran(first.stdout)
    for out in ("data/results.parquet", "data/agreement.csv", "results/verified/results.csv",
                "results/post_deadline/results.csv", "metrics.json", "audit/claims.json",
                "audit/scaling.json", "audit/validation.json", "reports/index.html"):
        assert (project / out).is_file(), out

    verified = pd.read_csv(project / "results/verified/results.csv")
    post = pd.read_csv(project / "results/post_deadline/results.csv")
    assert set(verified["status"]) == {"verified"}
    assert set(post["status"]) == {"post-deadline"}
    assert set(post["label"]) == {"unverified"}
    assert set(post["footnote"]) == {"Result not verified by MLCommons Association."}
    assert not set(verified["source"]) & set(post["source"])

    second = _run(["dvc", "repro"], project)
    assert _ran(second.stdout) == set()
    assert "Data and pipelines are up to date" in second.stdout

    # A partner sends a new version: only its ingest and the downstream stages rerun.
    source = project / "submissions/v5.1/Vultr/v1/results.csv"
    changed = project.parent / "vultr-v2.csv"
    changed.write_text(source.read_text().replace("30339.4", "31339.4"))
    _run(["mlrepro", "submit", str(changed), "--submitter", "Vultr", "--round", "v5.1",
          "--status", "verified", "--submitted-at", "2025-07-31T10:00:00+00:00"], project)
    # ingest counts a version from when it entered the branch (pipeline/clock.py): merged in time
    when = ("GIT_AUTHOR_DATE=2025-07-31T12:00:00Z", "GIT_COMMITTER_DATE=2025-07-31T12:00:00Z")
    git = ["env", *when, "git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    _run([*git, "add", "-A"], project)
    _run([*git, "commit", "-qm", "Vultr v2, merged before the deadline"], project)
    third = _run(["dvc", "repro"], project)
    ran = _ran(third.stdout)
    assert {s for s in ran if s.startswith("ingest@")} == {"ingest@v5.1-Vultr"}
    assert {"table", "compare", "partition@results", "partition@agreement", "metrics"} <= ran
    agreement = pd.read_csv(project / "data/agreement.csv")
    vultr_server = agreement[(agreement["submitter"] == "Vultr") & (agreement["scenario"] == "Server")]
    assert set(vultr_server["verdict"]) == {"agree"}
    assert all(vultr_server["source"].str.startswith("v5.1/Vultr/v2/"))
