"""What `make run` says: DVC's hints that do not apply here are dropped (no
remote; dvc.lock is the maintainers'), DVC's own errors pass untouched, and
the last line separates the pipeline's outcome from the data's. Each stage's
line too. In a small DVC project run through bin/restore-lock, as make run runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from pipeline.core.findings import Report, located
from pipeline.core.model import Source
from pipeline.output.outcome import pipeline_line, stage_line

RESTORE_LOCK = REPO / "bin" / "restore-lock"


def _project(tmp_path: Path, cmd: str) -> Path:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([Path(sys.executable).parent / "dvc", "init", "-q"], cwd=tmp_path, check=True, env=env)
    (tmp_path / "dvc.yaml").write_text(f"stages:\n  one:\n    cmd: {cmd}\n    outs:\n      - out.txt\n",
                                       encoding="utf-8")
    return tmp_path


def _repro(project: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, RESTORE_LOCK, "dvc", "repro"], cwd=project, capture_output=True,
                          text=True, env=env, timeout=120)


def test_dvcs_hints_are_dropped_and_the_last_line_says_the_pipeline_ran(tmp_path):
    done = _repro(_project(tmp_path, "echo hi > out.txt"))
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "Running stage 'one'" in said
    assert "dvc push" not in said and "To track the changes with git" not in said and "autostage" not in said
    assert done.stdout.rstrip().splitlines()[-1].startswith("pipeline: ok (1 stage); data: no findings (")


def test_dvcs_own_errors_pass_and_no_outcome_line_follows_a_failure(tmp_path):
    done = _repro(_project(tmp_path, "exit 7"))
    assert done.returncode != 0
    assert "failed to reproduce 'one'" in done.stderr and "exited with 7" in done.stderr
    assert "pipeline: ok" not in done.stdout + done.stderr


def test_a_stages_line_counts_the_data_findings_by_code():
    where = Source("claims.yaml", 3)
    report = Report([], [located("claim-not-supported", where, "x", "y", "m"),
                         located("claim-cherry-picked", where, "x", "y", "m", "warning"),
                         located("claim-cherry-picked", where, "x", "y", "m", "warning")], {})
    assert stage_line(report, "report-all") == (
        "pipeline: ok (stage report-all); data: 3 findings (1 error): claim-cherry-picked 2, "
        "claim-not-supported 1 (findings above; exit 0 because stages record findings; the gate is what "
        "fails a build)")
    assert stage_line(Report([], [], {}), "audit").startswith("pipeline: ok (stage audit); data: no findings (exit 0")


def test_the_runs_line_reads_the_outputs_so_a_no_op_run_says_the_same(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "audit").mkdir()
    (tmp_path / "data" / "agreement_summary.json").write_text(json.dumps({"agree": 73, "deviates": 21}))
    (tmp_path / "data" / "findings.json").write_text("[]")
    (tmp_path / "audit" / "claims.json").write_text(json.dumps({"findings": [
        {"code": "claim-not-supported", "severity": "error"}]}))
    assert pipeline_line(tmp_path, 4).startswith(
        "pipeline: ok (4 stages); partner results: 73 agree, 21 deviates; data: 1 finding (1 error): "
        "claim-not-supported 1 (")
